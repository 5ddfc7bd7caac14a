/* The C ABI from a C program, built with nothing but the installed header
 * and `pkg-config --cflags --libs gpudoctor` (tests/lib/install_test.py).
 *
 * usage: abi_test HEALTHY_OPTIONS_JSON CUDA_OPTIONS_JSON
 * The environment names a healthy fake scenario. Exit 0 when every
 * expectation holds; else one line per failure on stderr. */
#include <gpudoctor/gpudoctor.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(int ok, const char* what, const char* detail) {
  if (!ok) {
    fprintf(stderr, "abi_test: FAIL %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    ++failures;
  }
}

static int contains(const char* text, const char* needle) {
  return text != NULL && strstr(text, needle) != NULL;
}

int main(int argc, char** argv) {
  char* out = NULL;
  int rc;
  if (argc != 3) {
    fprintf(stderr, "usage: abi_test HEALTHY_OPTIONS_JSON CUDA_OPTIONS_JSON\n");
    return 64;
  }

  expect(gpudoctor_abi_version() == GPUDOCTOR_ABI_VERSION, "header and library ABI agree", NULL);
  expect(gpudoctor_version() != NULL && gpudoctor_version()[0] != '\0', "version", NULL);

  /* The healthy 4x4090 fake: warn at worst (CUDA order differs from PCI's). */
  rc = gpudoctor_preflight(argv[1], &out);
  expect(rc == GPUDOCTOR_OK || rc == GPUDOCTOR_WARN, "preflight on a healthy machine", out);
  expect(contains(out, "\"schema\": \"gpudoctor.report/v1\""), "report schema", out);
  expect(contains(out, "\"verdict\""), "report verdict", out);
  gpudoctor_free(out);

  /* Only the code: the out parameter may be NULL. */
  rc = gpudoctor_preflight(argv[1], NULL);
  expect(rc == GPUDOCTOR_OK || rc == GPUDOCTOR_WARN, "preflight without out", NULL);

  rc = gpudoctor_cuda_available(argv[2], &out);
  expect(rc == GPUDOCTOR_OK, "cuda_available on a healthy machine", out);
  expect(contains(out, "\"available\": true"), "cuda_available JSON", out);
  expect(contains(out, "\"device_count\": 4"), "four devices", out);
  gpudoctor_free(out);

  /* Usage errors: 64 and a JSON error naming the problem. */
  rc = gpudoctor_preflight("{\"no_such_option\": 1}", &out);
  expect(rc == GPUDOCTOR_USAGE, "unknown key is a usage error", out);
  expect(contains(out, "no_such_option"), "error names the key", out);
  gpudoctor_free(out);
  rc = gpudoctor_cuda_available("[1, 2", &out);
  expect(rc == GPUDOCTOR_USAGE && contains(out, "\"error\""), "bad JSON is a usage error", out);
  gpudoctor_free(out);

  gpudoctor_free(NULL);
  if (failures == 0) printf("abi_test: ok\n");
  return failures == 0 ? 0 : 1;
}
