// Placeholder until the node-problem-detector sink lands.
#include "report/npd.h"

namespace gd {

NpdResult render_npd(const Report&) { return {2, "gpudoctor: npd output not built yet\n"}; }

}  // namespace gd
