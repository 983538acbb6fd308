/* Native tests of wtplugin.h: the allocator, the attribute scanner, the error
 * formatter and the libm-free math (against the platform's libm). Run by
 * plugins-wasm/sdk/sdk_test.go; build alone with
 *   cc -std=c11 -Wall -Wextra -Werror -o t wtplugin_test.c -lm && ./t */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "wtplugin.h"

static int failures;

#define CHECK(cond, ...)                                                                      \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                       \
            printf(__VA_ARGS__);                                                              \
            printf("\n");                                                                     \
            failures++;                                                                       \
        }                                                                                     \
    } while (0)

static void test_allocator(void) {
    uint32_t a = wt_alloc(3), b = wt_alloc(16), c = wt_alloc(0);
    CHECK(a && b && c, "allocations failed: %u %u %u", a, b, c);
    CHECK(a % 8 == 0 && b % 8 == 0 && c % 8 == 0, "not 8-aligned: %u %u %u", a, b, c);
    CHECK(b >= a + 3 && c >= b + 16, "blocks overlap: %u %u %u", a, b, c);
    wt_free(a, 3); /* out of order: only the count drops */
    CHECK(wt_alloc(8) > c, "freeing a middle block must not move the top");
    wt_free(c + 8, 8);
    wt_free(b, 16);
    wt_free(c, 0);
    CHECK(wt_alloc(8) == a, "with every block free the region restarts at its base");
    wt_free(a, 8);
    wt_free(12345678, 8); /* not ours: ignored */
    CHECK(wt_alloc(WT_NATIVE_ARENA) == 0, "an allocation larger than memory returns 0");
    CHECK(wt_alloc(8) == a, "a failed allocation leaves the region as it was");
    wt_free(a, 8);
}

static const wt_call *with_attrs(const char *json) {
    return WT_PTR(const wt_call, wt_test_call(0, 0, json));
}

static void test_attributes(void) {
    const wt_call *c = with_attrs("{\"s\": \"a,}\\\"b\", \"list\": [1, [2, {\"x\": 3}]], "
                                  "\"limit\": 2.5, \"neg\": -1e-3, \"big\": 12345678901234567890,"
                                  "\"i\": 42, \"t\": true, \"f\": false, \"inf\": \"-inf\", \"tiny\": 0.1}");
    CHECK(wt_attr_float(c, "limit", 0) == 2.5, "limit = %g", wt_attr_float(c, "limit", 0));
    CHECK(wt_attr_float(c, "neg", 0) == -1e-3, "neg = %.17g", wt_attr_float(c, "neg", 0));
    CHECK(wt_attr_float(c, "tiny", 0) == 0.1, "0.1 must parse to the nearest double");
    CHECK(fabs(wt_attr_float(c, "big", 0) / 12345678901234567890.0 - 1) < 1e-15, "big");
    CHECK(wt_attr_int(c, "i", 0) == 42, "i");
    CHECK(wt_attr_bool(c, "t", 0) == 1 && wt_attr_bool(c, "f", 1) == 0, "bools");
    CHECK(isinf(wt_attr_float(c, "inf", 0)) && wt_attr_float(c, "inf", 0) < 0, "\"-inf\"");
    CHECK(wt_attr_float(c, "missing", 7) == 7, "a missing attribute gives the default");
    CHECK(wt_attr_float(c, "s", 7) == 7, "a string is not a number");
    CHECK(wt_attr_float(c, "x", 7) == 7, "keys inside nested values are not attributes");
    CHECK(wt_attr_float(with_attrs(""), "limit", 3) == 3, "no attributes at all");
    CHECK(wt_attr_float(with_attrs("{\"limit\":1e2}"), "limit", 3) == 100, "no spaces");
}

static void test_errors(void) {
    CHECK(wt_failf("x %s %d %u %lld %f %f %f %%", "op", -12, 7u, -9000000000LL, 2.5, -0.125, 1e-9) == 1,
          "wt_failf returns 1");
    const char *want = "x op -12 7 -9000000000 2.5 -0.125 0 %";
    CHECK(strcmp(wt_test_error(), want) == 0, "got \"%s\", want \"%s\"", wt_test_error(), want);
    int64_t packed = wt_error();
    CHECK((uint32_t)packed == strlen(want), "wt_error length %u", (uint32_t)packed);
    CHECK(memcmp(WT_PTR(char, (uint32_t)(packed >> 32)), want, strlen(want)) == 0, "wt_error bytes");
}

static void test_record_checks(void) {
    const float x[2] = {1, 2};
    const uint32_t shape[1] = {2};
    uint32_t call = wt_test_call(1, 1, "{}");
    wt_test_tensor(call, 0, WT_F32, x, 1, shape);
    wt_test_tensor(call, 1, WT_F32, 0, 1, shape);
    wt_call *c = WT_PTR(wt_call, call);
    CHECK(wt_check_call(c) == 0, "a good record: %s", wt_test_error());
    c->tensors[1].nbytes = 4;
    CHECK(wt_check_call(c) == 1 && strstr(wt_test_error(), "output 0: 4 bytes do not hold 2 f32 elements"),
          "%s", wt_test_error());
    c->tensors[1].nbytes = 8;
    c->tensors[0].ndim = 9;
    CHECK(wt_check_call(c) == 1 && strstr(wt_test_error(), "input 0 has 9 dims"), "%s", wt_test_error());
    c->tensors[0].data = 0; /* an absent optional input is not checked */
    CHECK(wt_check_call(c) == 0, "absent input: %s", wt_test_error());
}

static double rel(double got, double want) {
    if (got == want)
        return 0;
    return fabs(got - want) / fmax(fabs(want), 1e-300);
}

static void test_math(void) {
    double worst_exp = 0, worst_expm1 = 0, worst_tanh = 0, worst_sig = 0;
    for (double x = -700; x <= 700; x += 0.01373) {
        worst_exp = fmax(worst_exp, rel(wt_exp(x), exp(x)));
        worst_sig = fmax(worst_sig, rel(wt_sigmoid(x), 1 / (1 + exp(-x))));
    }
    for (double x = -30; x <= 30; x += 0.000731) {
        worst_expm1 = fmax(worst_expm1, rel(wt_expm1(x), expm1(x)));
        worst_tanh = fmax(worst_tanh, rel(wt_tanh(x), tanh(x)));
    }
    for (double x = 1e-300; x < 1e-3; x *= 3.7) {
        worst_tanh = fmax(worst_tanh, rel(wt_tanh(x), tanh(x)));
        worst_expm1 = fmax(worst_expm1, rel(wt_expm1(-x), expm1(-x)));
    }
    CHECK(worst_exp < 1e-15, "exp: worst relative error %g", worst_exp);
    CHECK(worst_expm1 < 1e-15, "expm1: worst relative error %g", worst_expm1);
    CHECK(worst_tanh < 1e-15, "tanh: worst relative error %g", worst_tanh);
    CHECK(worst_sig < 1e-15, "sigmoid: worst relative error %g", worst_sig);
    CHECK(wt_exp(710) == INFINITY && wt_exp(-746) == 0 && isnan(wt_exp(NAN)), "exp edges");
    CHECK(wt_tanh(50) == 1 && wt_tanh(-50) == -1 && isnan(wt_tanh(NAN)), "tanh edges");
    CHECK(signbit(wt_tanh(-0.0)), "tanh(-0) = -0");
}

int main(void) {
    test_allocator();
    test_attributes();
    test_errors();
    test_record_checks();
    test_math();
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
