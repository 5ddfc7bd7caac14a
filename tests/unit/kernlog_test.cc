// The kernel-log parser layer: kmsg records, line forms, the decoder and
// the scanner, on real line shapes from several driver generations.
#include <gtest/gtest.h>

#include <random>

#include "catalog/nvrm.h"
#include "kernlog/decode.h"
#include "kernlog/kmsg.h"
#include "kernlog/line.h"
#include "kernlog/scanner.h"
#include "util/text.h"

namespace gd {
namespace {

TEST(Kmsg, ParsesRecordWithCallerAndDictionary) {
  auto r = parse_kmsg_record(
      "4,1201,88123456,-,caller=T812;NVRM: Xid (PCI:0000:17:00): 79, GPU has fallen off the "
      "bus.\n SUBSYSTEM=pci\n DEVICE=+pci:0000:17:00.0\n");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->level, 4);
  EXPECT_EQ(r->facility, 0);
  EXPECT_EQ(r->seq, 1201u);
  EXPECT_EQ(r->ts_usec, 88123456u);
  EXPECT_FALSE(r->continuation);
  EXPECT_EQ(r->message, "NVRM: Xid (PCI:0000:17:00): 79, GPU has fallen off the bus.");
}

TEST(Kmsg, UnescapesAndFlagsContinuation) {
  auto r = parse_kmsg_record("6,2,3,c;a\\x0ab\\x5c\\xZZ");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->continuation);
  EXPECT_EQ(r->message, "a\nb\\\\xZZ");
}

TEST(Kmsg, RejectsGarbage) {
  for (const char* bad : {"", ";", "6,1;x", "x,1,2,-;m", "6,1,2;m", "6,,2,-;m", "99999,1,2,-;m",
                          "\xff\xfe,1,2,-;m"}) {
    EXPECT_FALSE(parse_kmsg_record(bad).ok()) << bad;
  }
  EXPECT_TRUE(looks_like_kmsg_record("6,3964,206764307,-;nvidia-nvswitch2: open (major=510)"));
  EXPECT_FALSE(looks_like_kmsg_record("[  12.3] NVRM: x"));
}

TEST(Line, EveryForm) {
  struct Case {
    const char* line;
    LineForm form;
    std::optional<double> boot_s;
    std::optional<int64_t> unix_s;
    const char* message;
    const char* ident;
  };
  const int64_t dec2_10h = 1796205601;  // 2026-12-02T10:00:01Z
  const Case cases[] = {
      {"[  12.345678] NVRM: loading", LineForm::kDmesg, 12.345678, {}, "NVRM: loading", ""},
      {"[Wed Dec  2 10:00:01 2026] NVRM: x", LineForm::kDmesgHuman, {}, dec2_10h, "NVRM: x", ""},
      {"kern  :warn  : [   99.000001] NVRM: y", LineForm::kDmesg, 99.000001, {}, "NVRM: y", ""},
      // dmesg -r: the raw priority before the stamp.
      {"<4>[ 3313.000000] nvidia-nvswitch2: SXid",
       LineForm::kDmesg,
       3313.0,
       {},
       "nvidia-nvswitch2: SXid",
       ""},
      // dmesg -x --time-format iso (github.com/leptonai/gpud/pull/338): no host
      // follows the stamp, so "nvidia 0000:01:00.0:" stays in the message.
      {"kern  :err   : 2026-12-02T10:00:01,859532+00:00 nvidia 0000:01:00.0: PCIe Bus Error",
       LineForm::kIsoSyslog,
       {},
       dec2_10h,
       "nvidia 0000:01:00.0: PCIe Bus Error",
       ""},
      // The fabric manager's own log (its shape as github.com/leptonai/gpud quotes it).
      {"[Dec 02 2026 10:00:01] [ERROR] [tid 841] detected NVSwitch fatal error 20034",
       LineForm::kFabricManager,
       {},
       dec2_10h,
       "detected NVSwitch fatal error 20034",
       "nv-fabricmanager"},
      {"[Dec  2 2026 10:00:01] [INFO] done",
       LineForm::kFabricManager,
       {},
       dec2_10h,
       "done",
       "nv-fabricmanager"},
      // A priority or decode prefix before no stamp is not stripped.
      {"<4>NVRM: bare", LineForm::kBare, {}, {}, "<4>NVRM: bare", ""},
      {"abc :def : 7 things", LineForm::kBare, {}, {}, "abc :def : 7 things", ""},
      {"Dec  2 10:00:01 node7 kernel: [  12.5] NVRM: z", LineForm::kSyslog, 12.5, dec2_10h,
       "NVRM: z", "kernel"},
      {"Dec 02 10:00:01 node7 kernel: NVRM: j",
       LineForm::kSyslog,
       {},
       dec2_10h,
       "NVRM: j",
       "kernel"},
      {"Dec 02 10:00:01.123456 node7 nv-fabricmanager[812]: detected",
       LineForm::kSyslog,
       {},
       dec2_10h,
       "detected",
       "nv-fabricmanager"},
      {"2026-12-02T10:00:01.123456+00:00 node7 kernel: NVRM: i",
       LineForm::kIsoSyslog,
       {},
       dec2_10h,
       "NVRM: i",
       "kernel"},
      {"2026-12-02T11:00:01+0100 node7 kernel: NVRM: i",
       LineForm::kIsoSyslog,
       {},
       dec2_10h,
       "NVRM: i",
       "kernel"},
      {"4,1201,88123456,-;NVRM: k", LineForm::kKmsg, 88.123456, {}, "NVRM: k", ""},
      {"NVRM: bare", LineForm::kBare, {}, {}, "NVRM: bare", ""},
      {"[not a stamp] NVRM: b", LineForm::kBare, {}, {}, "[not a stamp] NVRM: b", ""},
  };
  for (const Case& c : cases) {
    LogLine l = parse_log_line(c.line, 2026);
    EXPECT_EQ(l.form, c.form) << c.line;
    EXPECT_EQ(l.message, c.message) << c.line;
    EXPECT_EQ(l.ident, c.ident) << c.line;
    EXPECT_EQ(l.unix_s, c.unix_s) << c.line;
    ASSERT_EQ(l.boot_s.has_value(), c.boot_s.has_value()) << c.line;
    if (c.boot_s) {
      EXPECT_NEAR(*l.boot_s, *c.boot_s, 1e-9) << c.line;
    }
  }
}

TEST(Line, TruncatedAndBinaryNeverCrash) {
  std::mt19937 rng(7);
  const std::string seeds[] = {"[  12.345678] NVRM: Xid (PCI:0000:17:00): 79, x",
                               "Dec  2 10:00:01 node7 kernel: [  1.0] NVRM: x",
                               "[Wed Dec  2 10:00:01 2026] x", "2026-12-02T10:00:01+00:00 h k: m",
                               "4,1,2,-;m"};
  for (const std::string& s : seeds) {
    for (size_t n = 0; n <= s.size(); ++n) parse_log_line(s.substr(0, n), 2026);
    for (int i = 0; i < 200; ++i) {
      std::string m = s;
      m[rng() % m.size()] = static_cast<char>(rng());
      LogLine l = parse_log_line(m, 2026);
      EXPECT_LE(l.message.size(), m.size());
    }
  }
}

std::vector<KernelEvent> decode_all(const std::vector<std::string>& messages) {
  KernelMessageDecoder d;
  std::vector<DecodedEvent> out;
  for (const auto& m : messages) d.feed(m, {}, m, &out);
  d.flush(&out);
  std::vector<KernelEvent> events;
  for (auto& e : out) events.push_back(e.event);
  return events;
}

TEST(Decode, NormalizesPciAddresses) {
  EXPECT_EQ(normalize_pci_address("0000:17:00"), "0000:17:00.0");
  EXPECT_EQ(normalize_pci_address("PCI:0000:9B:00"), "0000:9b:00.0");
  EXPECT_EQ(normalize_pci_address("00000000:41:00.0"), "0000:41:00.0");
  EXPECT_EQ(normalize_pci_address("0008:01:00.1"), "0008:01:00.1");
  EXPECT_EQ(normalize_pci_address("10000:01:00.0"), "10000:01:00.0");
  for (const char* bad : {"", "0000:17", "000:17:00", "0000:17:00.9", "0000:17:20.0", "xyz"}) {
    EXPECT_EQ(normalize_pci_address(bad), "") << bad;
  }
}

TEST(Decode, XidInEveryDriverGenerationsShape) {
  auto ev = decode_all({
      // R515 .. R570.86: pid and name always, <unknown> without a process
      "NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
      "bus.",
      // R570.124+: with a process
      "NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of "
      "waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).",
      // R570.124+: no process context
      "NVRM: Xid (PCI:0000:06:00): 120, GSP task exception: store access page fault (cause:0xf) @ "
      "pc:0x13ebd80, partition:2#0, task:3",
      // MIG-attributed, pid without name
      "NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: "
      "No, D-RST: No",
      // before R515: no PCI: prefix
      "NVRM: Xid (0000:03:00): 14, Channel 00000001",
      "NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x4 (Drain and Reset) to "
      "0x1 (GPU Reset Required)",
  });
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev[0].kind, "xid");
  EXPECT_EQ(ev[0].code, 79);
  EXPECT_EQ(ev[0].gpu, "0000:05:00.0");
  EXPECT_EQ(ev[0].pid, 0);
  EXPECT_EQ(ev[0].process, "");
  EXPECT_EQ(ev[0].message, "GPU has fallen off the bus.");
  EXPECT_EQ(ev[1].code, 119);
  EXPECT_EQ(ev[1].pid, 2024380);
  EXPECT_EQ(ev[1].process, "nvidia-smi");
  EXPECT_EQ(ev[1].gpu, "0000:9b:00.0");
  EXPECT_EQ(ev[2].code, 120);
  EXPECT_EQ(ev[2].pid, 0);
  EXPECT_EQ(ev[2].message.rfind("GSP task exception", 0), 0u);
  EXPECT_EQ(ev[3].code, 94);
  EXPECT_EQ(ev[3].pid, 7194);
  EXPECT_EQ(ev[3].gpu, "0000:01:00.0");
  EXPECT_EQ(ev[3].message.rfind("Contained:", 0), 0u);
  EXPECT_EQ(ev[4].code, 14);
  EXPECT_EQ(ev[4].gpu, "0000:03:00.0");
  EXPECT_EQ(ev[5].code, 154);
  EXPECT_EQ(ev[5].gpu, "0008:01:00.0");
}

TEST(Decode, SxidAndAerWithDetailLines) {
  auto ev = decode_all({
      "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted "
      "PRIV error (First)",
      "pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0",
      "nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver "
      "ID)",
      "nvidia 0000:01:00.0:   device [10de:2684] error status/mask=00000001/0000e000",
      "nvidia 0000:01:00.0:    [ 0] RxErr                  (First)",
      "pcieport 0000:00:03.1: AER: Multiple Uncorrected (Fatal) error received: 0000:41:00.0",
  });
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].kind, "sxid");
  EXPECT_EQ(ev[0].code, 12028);
  EXPECT_EQ(ev[0].type, "non-fatal");
  EXPECT_EQ(ev[0].gpu, "0000:05:00.0");
  EXPECT_EQ(ev[1].kind, "aer");
  EXPECT_EQ(ev[1].type, "corrected");
  EXPECT_EQ(ev[1].gpu, "0000:01:00.0");
  EXPECT_NE(ev[1].message.find("Physical Layer"), std::string::npos);
  EXPECT_NE(ev[1].message.find("RxErr"), std::string::npos);
  EXPECT_EQ(ev[2].type, "uncorrected-fatal");
  EXPECT_EQ(ev[2].gpu, "0000:41:00.0");
}

TEST(Decode, SxidLinesInEveryDriverShape) {
  // Field lines of NVIDIA/nvtrust#124 (the Data line comes before its SXid
  // there), the shapes without a severity word of soe_ls10.c (as NVIDIA's
  // NVSentinel fixtures print them), and an SXid behind a prefix this parser
  // does not know.
  auto ev = decode_all({
      "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Data {0x0000002b, 0x0000002b, "
      "0x00000000, 0x0000002b, 0x80005302, 0x00000000, 0x00000000, 0x00000000, 0x00000000}",
      "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 Minion Link DLREQ "
      "interrupt",
      "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Severity 0 Engine instance 44 "
      "Sub-engine instance 00",
      "nvidia-nvswitch0: SXid (PCI:0004:00:00.0): 26006, SOE HALTED",
      "host7 kern.err kernel: nvidia-nvswitch1: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 30 "
      "LTSSM Fault Up (First)",
      // A Severity line of another code, and one with no SXid before it: no event, nothing joined.
      "nvidia-nvswitch1: SXid (PCI:0000:07:00.0): 12033, Severity 1 Engine instance 00 "
      "Sub-engine instance 00",
  });
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].code, 22013);
  EXPECT_EQ(ev[0].type, "non-fatal");
  EXPECT_EQ(ev[0].device, "nvswitch3");
  EXPECT_EQ(ev[0].link, 44);
  EXPECT_EQ(ev[0].gpu, "0000:04:00.0");
  EXPECT_EQ(ev[0].message, "Minion Link DLREQ interrupt; severity 0, engine instance 44");
  EXPECT_EQ(ev[1].code, 26006);
  EXPECT_EQ(ev[1].type, "unstated");
  EXPECT_EQ(ev[1].link, -1);
  EXPECT_EQ(ev[1].message, "SOE HALTED");
  EXPECT_EQ(ev[2].code, 20034);
  EXPECT_EQ(ev[2].type, "fatal");
  EXPECT_EQ(ev[2].device, "nvswitch1");
  EXPECT_EQ(ev[2].link, 30);
  EXPECT_EQ(ev[2].message, "LTSSM Fault Up");  // "(First)" marks a burst, not the error
}

TEST(Decode, Xid79AndItsBannerAreOneEvent) {
  // The driver prints the Xid, then the banner (tests/logs/cases/dmesg-r535.log).
  const std::string xid =
      "NVRM: Xid (PCI:0000:61:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
      "bus.";
  KernelMessageDecoder d;
  std::vector<DecodedEvent> out;
  auto at = [](double s) { return Occurrence{"", s, std::nullopt}; };
  d.feed(xid, at(2400.0001), xid, &out);
  d.feed("NVRM: GPU 0000:61:00.0: GPU has fallen off the bus.", at(2400.0002), "", &out);
  // Another GPU's banner, and this GPU's banner an hour later, are events.
  d.feed("NVRM: GPU 0000:62:00.0: GPU has fallen off the bus.", at(2400.0003), "", &out);
  d.feed("NVRM: GPU 0000:61:00.0: GPU has fallen off the bus.", at(6000.0), "", &out);
  d.flush(&out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].event.kind, "xid");
  EXPECT_EQ(out[1].event.type, "fallen-off-bus");
  EXPECT_EQ(out[1].event.gpu, "0000:62:00.0");
  EXPECT_EQ(out[2].event.gpu, "0000:61:00.0");
}

TEST(Decode, PeermemAndNvlinkDiscovery) {
  auto ev = decode_all({
      // github.com/Mellanox/nv_peer_memory/issues/120
      "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping "
      "further processing",
      // github.com/leptonai/gpud/pull/1271
      "NVRM: knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's postRxDetLinkMask failed!",
  });
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind + "/" + ev[0].type, "peermem/invalid-context");
  EXPECT_EQ(ev[1].kind + "/" + ev[1].type, "nvlink/discovery-failed");
}

TEST(Decode, AnotherVendorsEndpointIsNoGpuEvent) {
  // A disk's corrected error, reported through the same root-port AER lines:
  // its vendor id (144d) says it is not a GPU's. The root port's own error
  // (pcieport, any vendor) may be a GPU's link and stays.
  auto ev = decode_all({
      "pcieport 0000:40:01.1: AER: Corrected error received: 0000:41:00.0",
      "nvme 0000:41:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
      "nvme 0000:41:00.0:   device [144d:a80a] error status/mask=00000001/0000e000",
      "nvme 0000:41:00.0:    [ 0] RxErr                  (First)",
      "pcieport 0000:00:01.0: AER: Corrected error received: 0000:00:01.0",
      "pcieport 0000:00:01.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer",
      "pcieport 0000:00:01.0:   device [8086:2030] error status/mask=00000080/00002000",
      "pcieport 0000:00:01.0:    [ 7] BadDLLP",
      "pcieport 0000:00:03.1: AER: Corrected error received: 0000:01:00.0",
      "nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer",
      "nvidia 0000:01:00.0:   device [10DE:2684] error status/mask=00000001/0000e000",
  });
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].gpu, "0000:00:01.0");
  EXPECT_NE(ev[0].message.find("BadDLLP"), std::string::npos);
  EXPECT_EQ(ev[1].gpu, "0000:01:00.0");
}

TEST(Decode, MultiLineNvrmMessagesAreJoined) {
  auto ev = decode_all({
      "NVRM: API mismatch: the client 'nvidia-smi' (pid 1234)",
      "NVRM: has the version 550.54.14, but this kernel module has",
      "NVRM: the version 535.104.05.  Please make sure that this",
      "NVRM: kernel module and all NVIDIA driver components",
      "NVRM: have the same version.",
      "NVRM: The NVIDIA GPU 0000:41:00.0",
      "NVRM: (PCI ID: 10de:2684) installed in this system has",
      "NVRM: fallen off the bus and is not responding to commands.",
      "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1b80)",
      "NVRM: installed in this system is not supported by the",
      "NVRM: NVIDIA 590.48.01 driver release.",
      "NVRM: Please see 'Appendix A - Supported NVIDIA GPU Products'",
      "NVRM: The NVIDIA probe routine was not called for 1 device(s).",
      "NVRM: This can occur when another driver was loaded and",
      "NVRM: obtained ownership of the NVIDIA device(s).",
      "NVRM: GPU 0000:17:00.0: RmInitAdapter failed! (0x62:0x40:2168)",
      "Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7",
      "nouveau 0000:01:00.0: DRM: VRAM: 8192 MiB",
      "NVRM: GPU 0000:18:00.0: GPU has fallen off the bus.",
      "NVRM: The NVIDIA GeForce GT 710 GPU installed in this system is",
      "NVRM:  supported through the NVIDIA 470.xx Legacy drivers. Please",
  });
  ASSERT_EQ(ev.size(), 9u);
  EXPECT_EQ(ev[8].type, "gpu-unsupported");
  EXPECT_EQ(ev[0].type, "api-mismatch");
  EXPECT_NE(ev[0].message.find("550.54.14"), std::string::npos);
  EXPECT_NE(ev[0].message.find("535.104.05"), std::string::npos);
  EXPECT_EQ(ev[1].type, "fallen-off-bus");
  EXPECT_EQ(ev[1].gpu, "0000:41:00.0");
  EXPECT_EQ(ev[2].type, "gpu-unsupported");
  EXPECT_EQ(ev[2].gpu, "0000:01:00.0");
  EXPECT_EQ(ev[3].type, "probe-not-called");
  EXPECT_EQ(ev[4].type, "rm-init-failed");
  EXPECT_EQ(ev[4].gpu, "0000:17:00.0");
  EXPECT_EQ(ev[5].kind, "module-signature");
  EXPECT_EQ(ev[5].type, "rejected");
  EXPECT_EQ(ev[6].kind, "nouveau");
  EXPECT_EQ(ev[6].gpu, "0000:01:00.0");
  EXPECT_EQ(ev[7].type, "fallen-off-bus");
  EXPECT_EQ(ev[7].gpu, "0000:18:00.0");
}

TEST(Decode, ALaterLineIsNoContinuation) {
  // Found by the benchmark: a banner 890 s after an API mismatch is its own event.
  KernelLogScanner s(2026);
  s.add_text(
      "[  10.000000] NVRM: API mismatch: the client 'nvidia-smi' (pid 1234)\n"
      "[  10.000001] NVRM: has the version 550.54.14, but this kernel module has\n"
      "[  20.000000] usb 1-1: noise\n"
      "[ 900.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14\n");
  KernelLogInfo info = s.finish({});
  ASSERT_EQ(info.events.size(), 2u);
  EXPECT_EQ(info.events[0].type, "api-mismatch");
  EXPECT_EQ(info.events[1].type, "loaded");
}

TEST(Decode, EveryPatternNeedlePassesThePrefilter) {
  // Found by fuzz_log_line: lines whose only keyword was a pattern needle
  // were dropped by the fast path.
  for (const char* line :
       {"[  3.1] Loading of unsigned module is rejected", "[  4.0] Detected Pre-NVL5 system",
        "[  5.0] failed to find the GPU handle 3 in the multicast team"}) {
    KernelLogScanner s(2026);
    s.add_text(line);
    EXPECT_EQ(s.finish({}).events.size(), 1u) << line;
  }
}

TEST(Scanner, PrefilterKeepsALineOfEveryPattern) {
  // The fast path must find every line the decoder's pattern table can
  // decode, whatever literals the table gains.
  for (const LogPattern& p : log_patterns()) {
    std::string line = std::string("[   1.000000] ") + p.prefix + p.needle;
    KernelLogScanner fast(2026), slow(2026);
    fast.add_text(line);
    slow.add_line(line);
    size_t expected = slow.finish({}).events.size();
    EXPECT_EQ(fast.finish({}).events.size(), expected) << line;
  }
}

TEST(Decode, GpuUuidBanner) {
  KernelMessageDecoder d;
  std::vector<DecodedEvent> out;
  d.feed("NVRM: GPU at PCI:0000:41:00: GPU-3b2a6c52-2d2e-4c5e-8d4f-1a2b3c4d5e6f", {}, "", &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(d.gpu_uuids().at("0000:41:00.0"), "GPU-3b2a6c52-2d2e-4c5e-8d4f-1a2b3c4d5e6f");
  // Found by fuzz_kmsg: device 0x50 is no PCI device number; no "" key.
  d.feed("NVRM: GPU at PCI:0004:10:50: GPU-x", {}, "", &out);
  EXPECT_EQ(d.gpu_uuids().size(), 1u);
}

TEST(Decode, IgnoresNoiseAndGarbage) {
  auto ev = decode_all({"usb 1-1: new high-speed USB device number 2 using xhci_hcd", "NVRM: Xid (",
                        "NVRM: Xid (PCI:0000:05:00): ", "NVRM: Xid (PCI:zz): 79, x",
                        "nvidia-nvswitch3: SXid (PCI:", "pcieport 0000:00:01.0: AER: ",
                        std::string("\0\xff\x01NVRM: \x80", 9), ""});
  EXPECT_TRUE(ev.empty());
}

std::string noisy_log(int events, unsigned seed, std::vector<std::string>* nvidia_lines) {
  std::mt19937 rng(seed);
  const char* noise[] = {
      "audit: type=1400 audit(1700000000.123:42): apparmor=\"DENIED\" operation=\"open\"",
      "EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Quota mode: none.",
      "IPv6: ADDRCONF(NETDEV_CHANGE): veth12ab: link becomes ready",
      "docker0: port 3(veth9) entered forwarding state",
      "TCP: request_sock_TCP: Possible SYN flooding on port 8080. Sending cookies."};
  const char* nv[] = {
      "NVRM: Xid (PCI:0000:%02x:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
      "bus.",
      "NVRM: Xid (PCI:0000:%02x:00): 13, pid=41, name=python3, Graphics Exception: ESR "
      "0x405840=0xa0040800",
      "nvidia-nvswitch%d: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress error"};
  std::string log;
  double t = 1;
  int placed = 0;
  while (placed < events) {
    t += 0.25;
    char buf[256];
    if (rng() % 20 == 0) {
      char msg[200];
      std::snprintf(msg, sizeof msg, nv[rng() % 3], static_cast<int>(rng() % 4 + 1));
      nvidia_lines->push_back(msg);
      std::snprintf(buf, sizeof buf, "[%12.6f] %s\n", t, msg);
      ++placed;
    } else {
      std::snprintf(buf, sizeof buf, "[%12.6f] %s\n", t, noise[rng() % 5]);
    }
    log += buf;
  }
  return log;
}

TEST(Scanner, FastPathFindsWhatLineByLineFinds) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    std::vector<std::string> nv;
    std::string log = noisy_log(300, seed, &nv);
    KernelLogScanner fast(2026), slow(2026);
    fast.add_text(log);
    size_t start = 0;
    while (start < log.size()) {
      size_t nl = log.find('\n', start);
      slow.add_line(std::string_view(log).substr(start, nl - start));
      start = nl + 1;
    }
    KernelLogInfo a = fast.finish({}), b = slow.finish({});
    ASSERT_EQ(a.events.size(), b.events.size());
    int total = 0;
    for (size_t i = 0; i < a.events.size(); ++i) {
      EXPECT_EQ(a.events[i].kind, b.events[i].kind);
      EXPECT_EQ(a.events[i].gpu, b.events[i].gpu);
      EXPECT_EQ(a.events[i].count, b.events[i].count);
      total += a.events[i].count;
    }
    EXPECT_EQ(total, 300);
    EXPECT_EQ(a.bytes, log.size());
  }
}

TEST(Scanner, FastPathKeepsAerErrorNamesAndSkipsNvidiaChatter) {
  // "nvidia" is no prefilter keyword (chatter says it on every line): an AER
  // group's error-name lines still reach the decoder by their "[ 0]" form,
  // and the message is the same as line by line.
  const std::string log =
      "[  9.0] nvidia-modeset: Allocated GPU:0 (GPU-1b9a0c7e) @ PCI:0000:01:00.0\n"
      "[ 10.0] pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0\n"
      "[ 10.0] nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer\n"
      "[ 10.0] nvidia 0000:01:00.0:   device [10de:2684] error status/mask=00000041/0000e000\n"
      "[ 10.0] nvidia 0000:01:00.0:    [ 0] RxErr                  (First)\n"
      "[ 10.0] nvidia 0000:01:00.0:    [ 6] BadTLP\n"
      "[ 10.0] nvidia 0000:01:00.0:    [x] NotAnIndex\n"
      "[ 11.0] nvidia-drm 0000:01:00.0: [drm] Cannot find any crtc or sizes\n";
  KernelLogScanner fast(2026), slow(2026);
  fast.add_text(log);
  for (std::string_view line : split_lines(log)) slow.add_line(line);
  KernelLogInfo a = fast.finish({}), b = slow.finish({});
  ASSERT_EQ(a.events.size(), 1u);
  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(a.events[0].kind, "aer");
  EXPECT_NE(a.events[0].message.find("RxErr BadTLP"), std::string::npos) << a.events[0].message;
  EXPECT_EQ(a.events[0].message.find("NotAnIndex"), std::string::npos);
  EXPECT_EQ(a.events[0].message, b.events[0].message);

  // The file is read in blocks: a group cut between two of them loses nothing.
  for (size_t cut = log.find('\n', log.find("Bus Error")) + 1; cut < log.size();
       cut = log.find('\n', cut) + 1) {
    KernelLogScanner split(2026);
    split.add_text(std::string_view(log).substr(0, cut));
    split.add_text(std::string_view(log).substr(cut));
    KernelLogInfo c = split.finish({});
    ASSERT_EQ(c.events.size(), 1u);
    EXPECT_EQ(c.events[0].message, a.events[0].message) << "cut at " << cut;
  }
}

TEST(Scanner, FoldsRepeatsWithFirstLastAndAge) {
  KernelLogScanner s(2026);
  s.add_text(
      "[  100.000000] NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has "
      "fallen off the bus.\n"
      "[  150.000000] usb 1-1: noise\n"
      "[  200.500000] NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has "
      "fallen off the bus.\n"
      "[  300.000000] NVRM: Xid (PCI:0000:42:00): 13, pid=7, name=python3, Graphics Exception\n");
  KernelLogInfo all = s.finish({});
  ASSERT_EQ(all.events.size(), 2u);
  EXPECT_EQ(all.events[0].count, 2);
  EXPECT_EQ(all.events[0].first, "[  100.000000]");
  EXPECT_EQ(all.events[0].last, "[  200.500000]");
  ASSERT_TRUE(all.events[0].age_s.has_value());
  EXPECT_NEAR(*all.events[0].age_s, 99.5, 1e-6);  // the newest line (300 s) is "now"
  EXPECT_EQ(all.events[1].code, 13);
}

TEST(Scanner, WindowDropsOldOccurrences) {
  KernelLogScanner s(2026);
  s.add_line("[  100.0] NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.");
  s.add_line("[ 5000.0] NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.");
  s.add_line("[ 5000.0] NVRM: Xid (PCI:0000:42:00): 48, DBE (double bit error)");
  KernelLogInfo info = s.finish({.now_boot_s = 5100.0, .now_unix_s = {}}, 600.0);
  ASSERT_EQ(info.events.size(), 2u);
  EXPECT_EQ(info.events[0].count, 1);
  EXPECT_EQ(info.events[0].first, "[ 5000.0]");
  EXPECT_NEAR(*info.events[0].age_s, 100, 1e-9);
}

TEST(Scanner, RecordsAndTakeNew) {
  KernelLogScanner s(2026);
  auto r = parse_kmsg_record(
      "4,10,5000000,-;NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.");
  ASSERT_TRUE(r.ok());
  s.add_record(*r);
  auto fresh = s.take_new();
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].first, "[    5.000000]");
  EXPECT_TRUE(s.take_new().empty());
  KernelLogInfo info = s.finish({.now_boot_s = 65.0, .now_unix_s = {}});
  ASSERT_EQ(info.events.size(), 1u);
  EXPECT_NEAR(*info.events[0].age_s, 60, 1e-9);
}

TEST(Scanner, BinaryGarbageAndTruncation) {
  std::mt19937 rng(3);
  std::string junk(1 << 16, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  std::string log = junk + "\n[  1.0] NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off\n" + junk +
                    "NVRM: Xid (PCI:0000:4";  // truncated last line
  KernelLogScanner s(2026);
  s.add_text(log);
  KernelLogInfo info = s.finish({});
  int xid79 = 0;
  for (const auto& e : info.events) xid79 += e.kind == "xid" && e.code == 79;
  EXPECT_EQ(xid79, 1);
}

}  // namespace
}  // namespace gd
