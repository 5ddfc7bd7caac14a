// The rows of sxid.h. Blocks: NVSWITCH_ERR_TYPE in open-gpu-kernel-modules
// src/common/nvswitch/interface/ctrl_dev_nvswitch.h ("NVSwitch errors values
// should start from 10000 (decimal) to be distinguishable from GPU errors").
// Codes: Fabric Manager User Guide v2.3, Tables 21-24, and its section
// "Runtime NVSwitch and GPU Errors" for the bare-metal actions:
// https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html
#include "catalog/sxid.h"

#include <algorithm>
#include <iterator>

namespace gd {

namespace {

struct Block {
  int first, last;
  const char* name;
};

// ctrl_dev_nvswitch.h, 550.40.07 and later.
constexpr Block kBlocks[] = {
    {10000, 10999, "NVSwitch host interface"},
    {11000, 11999, "NPORT ingress"},
    {12000, 12999, "NPORT egress"},
    {13000, 13999, "NPORT fstate"},
    {14000, 14999, "NPORT tstate"},
    {15000, 15999, "NPORT route"},
    {16000, 16999, "NPORT"},
    {17000, 17999, "NVLink control (NVLCTRL)"},
    {18000, 18999, "NVLink IP (NVLIPT)"},
    {19000, 19999, "NVLink transport (NVLTLC)"},
    {20000, 20999, "NVLink data/physical layer (DL/PL)"},
    {21000, 21999, "AFS"},
    {22000, 22999, "MINION link controller"},
    {23000, 23999, "NXBAR crossbar"},
    {24000, 24999, "NPORT source track"},
    {25000, 25999, "NVLink IP link (NVLIPT_LNK)"},
    {26000, 26999, "SOE firmware"},
    {27000, 27999, "CCI cable modules"},
    {28000, 28999, "OSFP thermal"},
    {29000, 29999, "NPORT multicast tstate"},
    {30000, 30999, "NPORT reduction tstate"},
};

// The bare-metal actions of the guide's "Runtime NVSwitch and GPU Errors".
constexpr const char* kNoAction = "none: informational (the guide: not applicable)";
constexpr const char* kFatalAction =
    "on a GPU (access) port: stop the jobs and reset the GPUs of the workload (nvidia-smi -r); on "
    "a trunk port: stop the fabric manager and the GPU jobs, reset all GPUs and NVSwitches "
    "(nvidia-smi -r), start the fabric manager; reboot if it persists";
constexpr const char* kAlwaysFatalAction =
    "fatal to the whole fabric: stop the jobs, then reboot, or reset (SBR) all NVSwitches and GPUs "
    "and restart the fabric manager";
constexpr const char* kEccLimit = "single-bit ECC errors, corrected by the NVSwitch";

// Table 21 (non-fatal), 22 (fatal), 23 (always fatal), 24 (other notable).
// Sorted by code.
constexpr SxidInfo kCodes[] = {
    {10001, "HOST_PRIV_ERROR", SxidClass::kNotable,
     "PRI error: not fatal to the fabric, but fatal events may follow",
     "watch for fatal SXids that follow"},
    {10002, "HOST_PRIV_TIMEOUT", SxidClass::kNotable,
     "PRI timeout: not fatal to the fabric, but fatal events may follow",
     "watch for fatal SXids that follow"},
    {10003, "HOST_UNHANDLED_INTERRUPT", SxidClass::kNotable,
     "an interrupt that is never expected: fatal to the fabric",
     "reset all GPUs and NVSwitches (nvidia-smi -r with the fabric manager stopped)"},
    {10004, "HOST_THERMAL_EVENT_START", SxidClass::kNotable,
     "NVSwitch thermal slowdown: links may drop to single-lane mode and lose NVLink bandwidth",
     "make sure the system's cooling is sufficient"},
    {10005, "HOST_THERMAL_EVENT_END", SxidClass::kNotable, "NVSwitch thermal slowdown ended",
     "make sure the system's cooling is sufficient"},
    {11001, "NPORT_INGRESS_CMDDECODEERR", SxidClass::kFatal, "ingress invalid command",
     kFatalAction},
    {11004, "NPORT_INGRESS_ACLFAIL", SxidClass::kNonFatal,
     "ingress invalid ACL: a wrong fabric partition configuration; NVLink traffic stalls and GPU "
     "access hangs (Xid 45)",
     "check the partition's routing (NVSwitch audit tool), then restart the workload"},
    {11009, "NPORT_INGRESS_INVALIDVCSET", SxidClass::kFatal, "ingress invalid VCSet", kFatalAction},
    {11012, "NPORT_INGRESS_NCISOC_HDR_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {11013, "NPORT_INGRESS_NCISOC_HDR_ECC_DBE_ERR", SxidClass::kFatal,
     "ingress header double-bit ECC error", kFatalAction},
    {11018, "NPORT_INGRESS_RIDTAB_ECC_DBE_ERR", SxidClass::kFatal,
     "ingress RID table double-bit ECC error", kFatalAction},
    {11019, "NPORT_INGRESS_RLANTAB_ECC_DBE_ERR", SxidClass::kFatal,
     "ingress RLAN table double-bit ECC error", kFatalAction},
    {11020, "NPORT_INGRESS_NCISOC_PARITY_ERR", SxidClass::kFatal, "ingress control parity error",
     kFatalAction},
    {11021, "NPORT_INGRESS_REMAPTAB_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {11022, "NPORT_INGRESS_RIDTAB_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {11023, "NPORT_INGRESS_RLANTAB_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {12001, "NPORT_EGRESS_EGRESSBUFERR", SxidClass::kFatal, "egress crossbar overflow",
     kFatalAction},
    {12002, "NPORT_EGRESS_PKTROUTEERR", SxidClass::kFatal, "egress packet route error",
     kFatalAction},
    {12020, "NPORT_EGRESS_SEQIDERR", SxidClass::kAlwaysFatal, "egress sequence ID error",
     kAlwaysFatalAction},
    {12021, "NPORT_EGRESS_NXBAR_HDR_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {12022, "NPORT_EGRESS_NXBAR_HDR_ECC_DBE_ERR", SxidClass::kFatal,
     "egress input double-bit ECC error", kFatalAction},
    {12023, "NPORT_EGRESS_RAM_OUT_HDR_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {12024, "NPORT_EGRESS_RAM_OUT_HDR_ECC_DBE_ERR", SxidClass::kFatal,
     "egress output double-bit ECC error", kFatalAction},
    {12025, "NPORT_EGRESS_NCISOCCREDITOVFL", SxidClass::kFatal, "egress credit overflow",
     kFatalAction},
    {12026, "NPORT_EGRESS_REQTGTIDMISMATCHERR", SxidClass::kFatal,
     "egress destination request ID error", kFatalAction},
    {12027, "NPORT_EGRESS_RSPREQIDMISMATCHERR", SxidClass::kFatal,
     "egress destination response ID error", kFatalAction},
    {12028, "NPORT_EGRESS_PRIVRSPERR", SxidClass::kNonFatal,
     "egress non-posted PRIV error: NVLink traffic stalls and GPU access hangs (Xid 45)",
     "restart the workload on the GPUs behind this port"},
    {12030, "NPORT_EGRESS_NXBAR_HDR_PARITY_ERR", SxidClass::kFatal, "egress control parity error",
     kFatalAction},
    {12031, "NPORT_EGRESS_NCISOC_CREDIT_PARITY_ERR", SxidClass::kFatal,
     "egress credit parity error", kFatalAction},
    {12032, "NPORT_EGRESS_NXBAR_FLITTYPE_MISMATCH_ERR", SxidClass::kFatal,
     "egress flit type mismatch", kFatalAction},
    {14017, "NPORT_TSTATE_ATO_ERR", SxidClass::kFatal, "tstate ATO timeout", kFatalAction},
    {15001, "NPORT_ROUTE_ROUTEBUFERR", SxidClass::kFatal, "route buffer over/underflow",
     kFatalAction},
    {15006, "NPORT_ROUTE_TRANSDONERESVERR", SxidClass::kFatal, "route transdone over/underflow",
     kFatalAction},
    {15008, "NPORT_ROUTE_GLT_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {15009, "NPORT_ROUTE_GLT_ECC_DBE_ERR", SxidClass::kFatal, "route GLT double-bit ECC error",
     kFatalAction},
    {15010, "NPORT_ROUTE_PDCTRLPARERR", SxidClass::kFatal, "route parity error", kFatalAction},
    {15011, "NPORT_ROUTE_NVS_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {15012, "NPORT_ROUTE_NVS_ECC_DBE_ERR", SxidClass::kFatal, "route incoming double-bit ECC error",
     kFatalAction},
    {15013, "NPORT_ROUTE_CDTPARERR", SxidClass::kFatal, "route credit parity error", kFatalAction},
    {19047, "NVLTLC_TX_SYS_NCISOC_HDR_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19048, "NVLTLC_TX_SYS_NCISOC_DAT_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19049, "NVLTLC_TX_SYS_NCISOC_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {19054, "NVLTLC_RX_SYS_HDR_RAM_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19055, "NVLTLC_RX_SYS_HDR_RAM_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {19056, "NVLTLC_RX_SYS_DAT0_RAM_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19057, "NVLTLC_RX_SYS_DAT0_RAM_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {19058, "NVLTLC_RX_SYS_DAT1_RAM_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19059, "NVLTLC_RX_SYS_DAT1_RAM_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {19060, "NVLTLC_TX_LNK_CREQ_RAM_HDR_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19061, "NVLTLC_TX_LNK_CREQ_RAM_DAT_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19062, "NVLTLC_TX_LNK_CREQ_RAM_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {19063, "NVLTLC_TX_LNK_RSP_RAM_HDR_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19064, "NVLTLC_TX_LNK_RSP_RAM_DAT_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19065, "NVLTLC_TX_LNK_RSP_RAM_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {19066, "NVLTLC_TX_LNK_COM_RAM_HDR_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19067, "NVLTLC_TX_LNK_COM_RAM_DAT_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19068, "NVLTLC_TX_LNK_COM_RAM_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {19069, "NVLTLC_TX_LNK_RSP1_RAM_HDR_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19070, "NVLTLC_TX_LNK_RSP1_RAM_DAT_ECC_DBE_ERR", SxidClass::kFatal,
     "NVLink TLC double-bit ECC error", kFatalAction},
    {19071, "NVLTLC_TX_LNK_RSP1_RAM_ECC_LIMIT_ERR", SxidClass::kNonFatal, kEccLimit, kNoAction},
    {19084, "NVLTLC_RX_LNK_AN1_HEARTBEAT_TIMEOUT_ERR", SxidClass::kNonFatal,
     "AN1 heartbeat timeout, usually with a fatal SXid",
     "reset all GPUs and NVSwitches (nvidia-smi -r with the fabric manager stopped)"},
    {20001, "DLPL_TX_REPLAY", SxidClass::kNonFatal,
     "NVLink packet retransmitted: may cost this port's NVLink throughput", kNoAction},
    {20012, "DLPL_RX_CRC_COUNTER", SxidClass::kNonFatal,
     "NVLink receive CRC errors: a broken or loose connection, or an uncoordinated shutdown",
     "unless it followed an uncoordinated shutdown, check the link's mechanical connections"},
    {20034, "DLPL_LTSSM_FAULT_UP", SxidClass::kFatal,
     "the link went down from active, usually with other NVLink errors",
     "reset the GPU (H100 and later; restart the workload on A100); report the GPU if it "
     "persists"},
    {22003, "MINION_HALT", SxidClass::kAlwaysFatal, "the MINION link controller halted",
     kAlwaysFatalAction},
    {22011, "MINION_EXTERR", SxidClass::kAlwaysFatal, "MINION link controller external error",
     kAlwaysFatalAction},
    {22012, "MINION_FATAL_LINK_INTR", SxidClass::kFatal,
     "MINION fatal link interrupt: a broken or loose connection, or an uncoordinated shutdown",
     kFatalAction},
    {22013, "MINION_NONFATAL", SxidClass::kNonFatal,
     "MINION link request interrupt: can be safely ignored", kNoAction},
    {23001, "NXBAR_TILE_INGRESS_BUFFER_OVERFLOW", SxidClass::kAlwaysFatal,
     "crossbar ingress buffer overflow", kAlwaysFatalAction},
    {23002, "NXBAR_TILE_INGRESS_BUFFER_UNDERFLOW", SxidClass::kAlwaysFatal,
     "crossbar ingress buffer underflow", kAlwaysFatalAction},
    {23003, "NXBAR_TILE_EGRESS_CREDIT_OVERFLOW", SxidClass::kAlwaysFatal,
     "crossbar egress credit overflow", kAlwaysFatalAction},
    {23004, "NXBAR_TILE_EGRESS_CREDIT_UNDERFLOW", SxidClass::kAlwaysFatal,
     "crossbar egress credit underflow", kAlwaysFatalAction},
    {23005, "NXBAR_TILE_INGRESS_NON_BURSTY_PKT", SxidClass::kAlwaysFatal,
     "crossbar packet burst error", kAlwaysFatalAction},
    {23006, "NXBAR_TILE_INGRESS_NON_STICKY_PKT", SxidClass::kAlwaysFatal,
     "crossbar packet sticky error", kAlwaysFatalAction},
    {23007, "NXBAR_TILE_INGRESS_BURST_GT_9_DATA_VC", SxidClass::kAlwaysFatal,
     "crossbar possible bubbles at ingress", kAlwaysFatalAction},
    {23008, "NXBAR_TILE_INGRESS_PKT_INVALID_DST", SxidClass::kAlwaysFatal,
     "crossbar packet with an invalid destination", kAlwaysFatalAction},
    {23009, "NXBAR_TILE_INGRESS_PKT_PARITY_ERROR", SxidClass::kAlwaysFatal,
     "crossbar packet parity error", kAlwaysFatalAction},
    {23010, "NXBAR_TILEOUT_INGRESS_BUFFER_OVERFLOW", SxidClass::kAlwaysFatal,
     "crossbar ingress buffer overflow", kAlwaysFatalAction},
    {23011, "NXBAR_TILEOUT_INGRESS_BUFFER_UNDERFLOW", SxidClass::kAlwaysFatal,
     "crossbar ingress buffer underflow", kAlwaysFatalAction},
    {23012, "NXBAR_TILEOUT_EGRESS_CREDIT_OVERFLOW", SxidClass::kAlwaysFatal,
     "crossbar egress credit overflow", kAlwaysFatalAction},
    {23013, "NXBAR_TILEOUT_EGRESS_CREDIT_UNDERFLOW", SxidClass::kAlwaysFatal,
     "crossbar egress credit underflow", kAlwaysFatalAction},
    {23014, "NXBAR_TILEOUT_INGRESS_NON_BURSTY_PKT", SxidClass::kAlwaysFatal,
     "crossbar packet burst error", kAlwaysFatalAction},
    {23015, "NXBAR_TILEOUT_INGRESS_NON_STICKY_PKT", SxidClass::kAlwaysFatal,
     "crossbar packet sticky error", kAlwaysFatalAction},
    {23016, "NXBAR_TILEOUT_INGRESS_BURST_GT_9_DATA_VC", SxidClass::kAlwaysFatal,
     "crossbar possible bubbles at ingress", kAlwaysFatalAction},
    {23017, "NXBAR_TILEOUT_EGRESS_CDT_PARITY_ERROR", SxidClass::kAlwaysFatal,
     "crossbar credit parity error", kAlwaysFatalAction},
    {24001, "NPORT_SOURCETRACK_CREQ_TCEN0_CRUMBSTORE_ECC_LIMIT_ERR", SxidClass::kNonFatal,
     kEccLimit, kNoAction},
    {24002, "NPORT_SOURCETRACK_CREQ_TCEN0_TD_CRUMBSTORE_ECC_LIMIT_ERR", SxidClass::kNonFatal,
     kEccLimit, kNoAction},
    {24003, "NPORT_SOURCETRACK_CREQ_TCEN1_CRUMBSTORE_ECC_LIMIT_ERR", SxidClass::kNonFatal,
     kEccLimit, kNoAction},
    {24004, "NPORT_SOURCETRACK_CREQ_TCEN0_CRUMBSTORE_ECC_DBE_ERR", SxidClass::kFatal,
     "source track TCEN0 crumbstore double-bit ECC error", kFatalAction},
    {24005, "NPORT_SOURCETRACK_CREQ_TCEN0_TD_CRUMBSTORE_ECC_DBE_ERR", SxidClass::kFatal,
     "source track TCEN0 TD crumbstore double-bit ECC error", kFatalAction},
    {24006, "NPORT_SOURCETRACK_CREQ_TCEN1_CRUMBSTORE_ECC_DBE_ERR", SxidClass::kFatal,
     "source track TCEN1 crumbstore double-bit ECC error", kFatalAction},
    {24007, "NPORT_SOURCETRACK_SOURCETRACK_TIME_OUT_ERR", SxidClass::kFatal, "source track timeout",
     kFatalAction},
};

}  // namespace

std::string_view sxid_block(int code, std::string_view message) {
  // Before 550.40.07 multicast tstate was 28xxx and reduction tstate 29xxx.
  // A multicast line says "MC TS" (the guide's own example: 28006, "MC TS
  // crumbstore MCTO"); otherwise both readings are named.
  if (code >= 28000 && code < 30000) {
    if (message.find("MC TS") != std::string_view::npos) return "NPORT multicast tstate";
    if (code < 29000) return "OSFP thermal (NPORT multicast tstate before driver 550.40.07)";
    return "NPORT multicast tstate (reduction tstate before driver 550.40.07)";
  }
  for (const Block& b : kBlocks) {
    if (code >= b.first && code <= b.last) return b.name;
  }
  return "";
}

const SxidInfo* find_sxid(int code) {
  auto it = std::lower_bound(std::begin(kCodes), std::end(kCodes), code,
                             [](const SxidInfo& s, int c) { return s.code < c; });
  return it != std::end(kCodes) && it->code == code ? &*it : nullptr;
}

const char* sxid_class_name(SxidClass c) {
  switch (c) {
    case SxidClass::kNonFatal:
      return "non-fatal";
    case SxidClass::kFatal:
      return "fatal";
    case SxidClass::kAlwaysFatal:
      return "always fatal";
    case SxidClass::kNotable:
      return "notable";
    case SxidClass::kUnlisted:
      break;
  }
  return "not in the guide";
}

}  // namespace gd
