// Compile-time comparison of gpudoctor's own declarations of NVIDIA's API
// (src/probe/cuda_api.h, nvml_api.h) with NVIDIA's headers, for the ABI tests
// (cuda_abi_test.cc, nvml_abi_test.cc).
//
// gpudoctor declares stand-ins, not NVIDIA's types: int for an enum of the
// same size (CUresult, CUdevice_attribute), its own struct for CUuuid, its
// own opaque handle for CUcontext. So two signatures "match" when they have
// as many parameters and each of ours is NVIDIA's type or a declared stand-in
// for it, pointer for pointer with the same constness. A 32-bit integer where
// NVIDIA has size_t (the old bug of calling cuDeviceTotalMem through a
// size_t* pointer) does not match.
#pragma once

#include <cstddef>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <type_traits>

#include "probe/hw_common.h"

namespace gd::abi {

// Our struct or opaque handle P stands for NVIDIA's N. Each test declares its
// pairs (after asserting the struct's layout, for a complete type).
template <class P, class N>
struct StandsFor : std::false_type {};

template <class P, class N>
consteval bool compatible();

template <class P, class N>
consteval bool compatible_pointee() {
  if constexpr (std::is_const_v<P> != std::is_const_v<N>) {
    return false;
  } else if constexpr (std::is_class_v<std::remove_cv_t<P>> &&
                       std::is_class_v<std::remove_cv_t<N>>) {
    return std::is_same_v<std::remove_cv_t<P>, std::remove_cv_t<N>> ||
           StandsFor<std::remove_cv_t<P>, std::remove_cv_t<N>>::value;
  } else {
    return compatible<std::remove_cv_t<P>, std::remove_cv_t<N>>();
  }
}

template <class P, class N>
consteval bool compatible() {
  if constexpr (std::is_same_v<P, N>) {
    return true;
  } else if constexpr (std::is_pointer_v<P> && std::is_pointer_v<N>) {
    return compatible_pointee<std::remove_pointer_t<P>, std::remove_pointer_t<N>>();
  } else if constexpr (std::is_enum_v<N> && std::is_integral_v<P>) {
    // An int where NVIDIA has a C enum: the same register, the same bytes.
    return sizeof(P) == sizeof(N) && alignof(P) == alignof(N);
  } else {
    return false;
  }
}

// A free function, not a member called from a static member's initializer:
// that is no complete-class context, and clang rejects the call there.
template <class PR, class... PA, class NR, class... NA>
consteval bool same_signature(PR (*)(PA...), NR (*)(NA...)) {
  if constexpr (sizeof...(PA) != sizeof...(NA)) {
    return false;
  } else {
    return compatible<PR, NR>() && (compatible<PA, NA>() && ...);
  }
}

template <class P, class N>
struct SameSignature : std::false_type {};

template <class PR, class... PA, class NR, class... NA>
struct SameSignature<PR(PA...), NR(NA...)> {
  static constexpr bool value =
      same_signature(static_cast<PR (*)(PA...)>(nullptr), static_cast<NR (*)(NA...)>(nullptr));
};

// The function type F of a gd::Sym<F> member.
template <class S>
struct SymFunction;
template <class F>
struct SymFunction<gd::Sym<F>> {
  using type = F;
};

// The NAME = value pairs of a header's enums whose names start with
// `prefix` ("CUDA_ERROR_OUT_OF_MEMORY = 2,"), read from the header's text.
inline std::map<std::string, int> enum_values(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  std::map<std::string, int> out;
  std::regex re("\\b(" + prefix + "\\w*)\\s*=\\s*(\\d+)");
  for (std::sregex_iterator it(s.begin(), s.end(), re), end; it != end; ++it) {
    out.emplace((*it)[1].str(), std::stoi((*it)[2].str()));
  }
  return out;
}

}  // namespace gd::abi

// Api::member, as the probe calls it, matches NVIDIA's declaration of `symbol`.
#define GD_ABI_SYMBOL(Api, member, symbol)                                                    \
  static_assert(::gd::abi::SameSignature<::gd::abi::SymFunction<decltype(Api::member)>::type, \
                                         std::remove_pointer_t<decltype(&symbol)>>::value,    \
                #Api "::" #member                                                             \
                     " is not called with the signature NVIDIA's header gives " #symbol)
