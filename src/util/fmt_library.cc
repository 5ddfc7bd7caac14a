// fmt's compiled part, built once here instead of in every file that
// formats. Debian ships fmt as a shared library only; the release build
// links nothing shared but glibc (cmake/release.cmake), and fmt's
// header-only form compiles format-inl.h's formatting code into each of
// the ~70 files that use fmt: measured on src/facts/health.cc, 6.0 s of
// gcc -O2 against 1.5 s (2026-12-07), minutes on every release build.
// So the release build compiles fmt's library sources' work here: the
// out-of-line functions of format-inl.h (FMT_FUNC, not inline outside
// header-only mode), and the templates fmt.h declares extern for its
// library to instantiate.
#include <fmt/format-inl.h>

#include <locale>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;

template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;

}  // namespace detail
FMT_END_NAMESPACE
