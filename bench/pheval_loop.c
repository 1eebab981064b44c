/* Calls phevaluator's C function evaluate_5cards once per hand, in a C loop, so the
 * figure is the function alone, without Python's call overhead. The library is the
 * one the Python package ships; it is loaded at run time. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*eval5_fn)(int, int, int, int, int);

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIBRARY HANDS.u8\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    eval5_fn eval5 = (eval5_fn)dlsym(lib, "evaluate_5cards");
    if (!eval5) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    FILE *f = fopen(argv[2], "rb");
    if (!f) { perror(argv[2]); return 1; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *cards = malloc(size);
    if (fread(cards, 1, size, f) != (size_t)size) { perror("read"); return 1; }
    fclose(f);
    long n = size / 5;
    struct timespec t0, t1;
    long long checksum = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        const uint8_t *c = cards + 5 * i;
        checksum += eval5(c[0], c[1], c[2], c[3], c[4]);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%ld %.6f %lld\n", n, seconds, checksum);
    return 0;
}
