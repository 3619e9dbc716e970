/* Exhaustive simulation of pairs of AIG literals, for netlist_miter.py:
 * a complete proof of a miter cone with few inputs, where SAT stalls
 * (two differently built multipliers).
 *
 *   aig_exhaust FILE
 * FILE (text): "V NI NA NP", then NI lines: the variable (0..V-1) of input
 * node i (nodes 1..NI); NA lines "r0 r1": AND node NI+1+k of two literals
 * (2 node + complement) of earlier nodes; NP lines "la lb": literals that
 * must be equal. Every one of the 2^V assignments of the variables is
 * simulated, 64 per word. Prints "equal PATTERNS" (exit 0) or "differ PAIR
 * PATTERN" (exit 1; variable v's value is bit v of PATTERN); exit 2 on a bad
 * file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 64 /* words per node per block: 4096 patterns, variables 0..11 */

static void bad(const char *msg) {
  fprintf(stderr, "aig_exhaust: %s\n", msg);
  exit(2);
}

int main(int argc, char **argv) {
  if (argc != 2) bad("usage: aig_exhaust FILE");
  FILE *f = fopen(argv[1], "r");
  if (!f) bad("cannot open the file");
  long v, ni, na, np;
  if (fscanf(f, "%ld %ld %ld %ld", &v, &ni, &na, &np) != 4 || v < 0 || v > 40 || ni < 0 || na < 0 || np < 1)
    bad("bad header");
  long nodes = 1 + ni + na;
  int *var = malloc(sizeof(int) * (ni + 1));
  long *and0 = malloc(sizeof(long) * (na + 1)), *and1 = malloc(sizeof(long) * (na + 1));
  long *pa = malloc(sizeof(long) * np), *pb = malloc(sizeof(long) * np);
  for (long i = 1; i <= ni; i++)
    if (fscanf(f, "%d", &var[i]) != 1 || var[i] < 0 || var[i] >= (v > 12 ? v : 12)) bad("bad input variable");
  for (long k = 0; k < na; k++) {
    long lim = 2 * (1 + ni + k); /* fanins come before the node */
    if (fscanf(f, "%ld %ld", &and0[k], &and1[k]) != 2 || and0[k] < 0 || and1[k] < 0 || and0[k] >= lim || and1[k] >= lim)
      bad("bad AND node");
  }
  for (long p = 0; p < np; p++)
    if (fscanf(f, "%ld %ld", &pa[p], &pb[p]) != 2 || pa[p] < 0 || pb[p] < 0 || pa[p] >= 2 * nodes || pb[p] >= 2 * nodes)
      bad("bad pair");
  fclose(f);
  uint64_t(*val)[W] = aligned_alloc(64, sizeof(uint64_t) * W * nodes);
  if (!val) bad("out of memory");
  memset(val[0], 0, sizeof val[0]);
  static const uint64_t pat[6] = {0xAAAAAAAAAAAAAAAAull, 0xCCCCCCCCCCCCCCCCull, 0xF0F0F0F0F0F0F0F0ull,
                                  0xFF00FF00FF00FF00ull, 0xFFFF0000FFFF0000ull, 0xFFFFFFFF00000000ull};
  /* variables 0..5 vary within a word, 6..11 over the block's words */
  for (long i = 1; i <= ni; i++)
    for (int w = 0; w < W; w++)
      val[i][w] = var[i] < 6 ? pat[var[i]] : var[i] < 12 ? ((w >> (var[i] - 6)) & 1 ? ~0ull : 0) : 0;
  uint64_t blocks = v > 12 ? 1ull << (v - 12) : 1;
  for (uint64_t blk = 0; blk < blocks; blk++) {
    for (long i = 1; i <= ni; i++)
      if (var[i] >= 12) {
        uint64_t x = (blk >> (var[i] - 12)) & 1 ? ~0ull : 0;
        for (int w = 0; w < W; w++) val[i][w] = x;
      }
    for (long k = 0; k < na; k++) {
      const uint64_t *x = val[and0[k] >> 1], *y = val[and1[k] >> 1];
      uint64_t mx = and0[k] & 1 ? ~0ull : 0, my = and1[k] & 1 ? ~0ull : 0;
      uint64_t *z = val[1 + ni + k];
      for (int w = 0; w < W; w++) z[w] = (x[w] ^ mx) & (y[w] ^ my);
    }
    for (long p = 0; p < np; p++) {
      const uint64_t *x = val[pa[p] >> 1], *y = val[pb[p] >> 1];
      uint64_t m = (pa[p] ^ pb[p]) & 1 ? ~0ull : 0;
      for (int w = 0; w < W; w++) {
        uint64_t d = x[w] ^ y[w] ^ m;
        if (d) {
          printf("differ %ld %llu\n", p, (unsigned long long)(blk << 12 | (uint64_t)w << 6 | __builtin_ctzll(d)));
          return 1;
        }
      }
    }
  }
  printf("equal %llu\n", (unsigned long long)(blocks << 12));
  return 0;
}
