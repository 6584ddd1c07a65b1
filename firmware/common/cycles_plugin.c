/*
 * cycles_plugin.c: a qemu TCG plugin that counts, per instruction address,
 * how often each instruction ran and how often control left it for
 * somewhere other than the next instruction (a taken branch), between the
 * firmware's calls of fw_profile_on and fw_profile_off (measure.c). run.py
 * --cycles builds it, runs the firmware with it, and prices the counts with
 * the Cortex-M4 timings of cycles.py.
 *
 * Debian's qemu 7.2 loads plugins but ships no qemu-plugin.h, so the few
 * functions of plugin API version 1 used here are declared below, as that
 * header declares them. Build: gcc -O2 -shared -fPIC. Arguments:
 *   on=ADDR,off=ADDR  the profile functions' addresses (hex, Thumb bit
 *                     clear); counting runs from a translation block that
 *                     starts at `on` to one that starts at `off`
 *   regions=PATH      optional: a file of function addresses (hex, one a
 *                     line, ascending): the generated operators. A block
 *                     starting at one opens that operator's region, which
 *                     lasts until the next one opens (region 0: before the
 *                     first), so each operator's counts include the crt
 *                     kernels it calls
 *   out=PATH          where the counts go at exit: one line per region and
 *                     address, "region pc size count taken" (hex pc,
 *                     decimal rest)
 *
 * Or, for a board serving requests (tvmnode-serve --device NAME=qemu-m4:
 * ARCHIVE), the session mode, which counts from the start and prices as it
 * goes:
 *   prices=PATH       cycles.py's write_prices: "mark ADDR", then per
 *                     instruction "pc cycles taken_extra" (hex pc,
 *                     ascending); an address not listed costs 1 cycle
 *   log=PATH          each time a block starting at the mark runs (the
 *                     session's clock function, called before and after
 *                     each timed repeat), a line "instructions cycles":
 *                     the running totals before that block, flushed at
 *                     once, so the host reads a repeat's counts as the
 *                     difference of two lines before the board answers
 *
 * Counting is per translation block: each block's instructions all run
 * when the block runs (the firmware takes no exceptions inside the
 * profiled region but SysTick's, whose handler is counted like any code).
 * A block whose successor does not start at its last instruction's
 * fall-through address ended in a taken branch.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- plugin API version 1 (qemu 7.2's include/qemu/qemu-plugin.h) ---- */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_cb_flags {
  QEMU_PLUGIN_CB_NO_REGS,
  QEMU_PLUGIN_CB_R_REGS,
  QEMU_PLUGIN_CB_RW_REGS
};
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
                                               struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
                                            void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
                                          qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags,
                                          void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
                                    qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
                                                 size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* An array of n elements of `size` bytes with room for one more: arr
 * itself, or arr grown (doubling *cap), or NULL when that fails (arr is
 * then left as it was). */
static void *room(void *arr, size_t n, size_t *cap, size_t size) {
  if (n < *cap) return arr;
  size_t more = *cap ? 2 * *cap : 64;
  void *grown = realloc(arr, more * size);
  if (grown != NULL) *cap = more;
  return grown;
}

/* ---- the counts ----------------------------------------------------------- */

typedef struct Block {
  uint64_t start, fall_through;
  uint32_t n;
  uint64_t *pc;  /* n instruction addresses */
  uint8_t *size; /* their sizes */
  uint64_t *runs, *taken; /* per region */
  struct Block *next;      /* every block, for the report */
} Block;

static Block *g_blocks;
static Block *g_prev;     /* the block that ran last while counting */
static size_t g_prev_region;
static uint64_t g_on, g_off;
static int g_counting;
static char *g_out;
static uint64_t *g_regions; /* region k + 1 starts at g_regions[k] */
static size_t g_nregions, g_region;

/* The region a block starting at `pc` opens, or 0. */
static size_t region_at(uint64_t pc) {
  size_t lo = 0, hi = g_nregions;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (g_regions[mid] < pc) lo = mid + 1;
    else hi = mid;
  }
  return lo < g_nregions && g_regions[lo] == pc ? lo + 1 : 0;
}

static void block_runs(unsigned int vcpu, void *userdata) {
  (void)vcpu;
  Block *b = userdata;
  if (b->start == g_on) g_counting = 1, g_region = 0;
  if (b->start == g_off) g_counting = 0;
  if (g_prev && g_prev->fall_through != b->start) g_prev->taken[g_prev_region]++;
  g_prev = NULL;
  if (g_counting) {
    size_t r = region_at(b->start);
    if (r) g_region = r;
    b->runs[g_region]++;
    g_prev = b, g_prev_region = g_region;
  }
}

static void block_translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  size_t n = qemu_plugin_tb_n_insns(tb);
  if (n == 0) return;
  Block *b = calloc(1, sizeof *b);
  if (b == NULL) return;
  b->pc = calloc(n, sizeof *b->pc);
  b->size = calloc(n, 1);
  b->runs = calloc(g_nregions + 1, sizeof *b->runs);
  b->taken = calloc(g_nregions + 1, sizeof *b->taken);
  if (b->pc == NULL || b->size == NULL || b->runs == NULL || b->taken == NULL) {
    free(b->pc), free(b->size), free(b->runs), free(b->taken), free(b);
    return;
  }
  b->n = (uint32_t)n;
  for (size_t i = 0; i < n; i++) {
    const struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
    b->pc[i] = qemu_plugin_insn_vaddr(in);
    b->size[i] = (uint8_t)qemu_plugin_insn_size(in);
  }
  b->start = b->pc[0];
  b->fall_through = b->pc[n - 1] + b->size[n - 1];
  b->next = g_blocks;
  g_blocks = b;
  qemu_plugin_register_vcpu_tb_exec_cb(tb, block_runs, QEMU_PLUGIN_CB_NO_REGS,
                                       b);
}

/* ---- session mode ---------------------------------------------------------- */

typedef struct {
  uint64_t pc;
  uint32_t cycles, extra; /* when it runs; added when it branches away */
} Price;

typedef struct {
  uint64_t start, fall_through, cycles;
  uint32_t n, extra; /* the last instruction's extra when taken */
} Priced;

static Price *g_prices;
static size_t g_nprices;
static uint64_t g_mark;
static FILE *g_log;
static uint64_t g_insns, g_cycles;
static const Priced *g_last;

static const Price *price_of(uint64_t pc) {
  size_t lo = 0, hi = g_nprices;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (g_prices[mid].pc < pc) lo = mid + 1;
    else hi = mid;
  }
  return lo < g_nprices && g_prices[lo].pc == pc ? &g_prices[lo] : NULL;
}

static void priced_runs(unsigned int vcpu, void *userdata) {
  (void)vcpu;
  const Priced *b = userdata;
  if (g_last && g_last->fall_through != b->start) g_cycles += g_last->extra;
  if (b->start == g_mark) {
    fprintf(g_log, "%" PRIu64 " %" PRIu64 "\n", g_insns, g_cycles);
    fflush(g_log);
  }
  g_insns += b->n;
  g_cycles += b->cycles;
  g_last = b;
}

static void priced_translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  size_t n = qemu_plugin_tb_n_insns(tb);
  if (n == 0) return;
  Priced *b = calloc(1, sizeof *b);
  if (b == NULL) return;
  b->n = (uint32_t)n;
  for (size_t i = 0; i < n; i++) {
    const struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
    uint64_t pc = qemu_plugin_insn_vaddr(in);
    const Price *p = price_of(pc);
    if (i == 0) b->start = pc;
    b->cycles += p ? p->cycles : 1;
    if (i + 1 == n) {
      b->extra = p ? p->extra : 0;
      b->fall_through = pc + qemu_plugin_insn_size(in);
    }
  }
  qemu_plugin_register_vcpu_tb_exec_cb(tb, priced_runs, QEMU_PLUGIN_CB_NO_REGS,
                                       b);
}

/* prices=PATH: 0, or -1 with what is wrong on stderr. */
static int read_prices(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "cycles_plugin: cannot read %s\n", path);
    return -1;
  }
  unsigned long long mark, pc;
  unsigned c, x;
  size_t cap = 0;
  if (fscanf(f, " mark %llx", &mark) != 1) {
    fprintf(stderr, "cycles_plugin: %s: no first line \"mark ADDR\"\n", path);
    fclose(f);
    return -1;
  }
  g_mark = mark;
  while (fscanf(f, "%llx %u %u", &pc, &c, &x) == 3) {
    if (g_nprices && pc <= g_prices[g_nprices - 1].pc) {
      fprintf(stderr, "cycles_plugin: %s: addresses must ascend\n", path);
      fclose(f);
      return -1;
    }
    Price *more = room(g_prices, g_nprices, &cap, sizeof *g_prices);
    if (more == NULL) {
      fclose(f);
      return -1;
    }
    g_prices = more;
    g_prices[g_nprices++] = (Price){pc, c, x};
  }
  int bad = !feof(f);
  fclose(f);
  if (bad) fprintf(stderr, "cycles_plugin: %s: a line is not \"pc cycles extra\"\n", path);
  return bad ? -1 : 0;
}

/* One line per instruction address, summed over the blocks holding it
 * (qemu may translate the same code into several blocks); the taken
 * branches are the last instruction's. */
static void report(qemu_plugin_id_t id, void *userdata) {
  (void)id, (void)userdata;
  FILE *f = fopen(g_out ? g_out : "cycles.txt", "w");
  if (f == NULL) return;
  for (const Block *b = g_blocks; b; b = b->next)
    for (size_t r = 0; r <= g_nregions; r++) {
      if (b->runs[r] == 0 && b->taken[r] == 0) continue;
      for (uint32_t i = 0; i < b->n; i++)
        fprintf(f, "%zu %" PRIx64 " %u %" PRIu64 " %" PRIu64 "\n", r, b->pc[i],
                (unsigned)b->size[i], b->runs[r], i + 1 == b->n ? b->taken[r] : 0);
    }
  fclose(f);
}

__attribute__((visibility("default"))) int qemu_plugin_install(
    qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
  (void)info;
  for (int i = 0; i < argc; i++) {
    if (strncmp(argv[i], "on=", 3) == 0) g_on = strtoull(argv[i] + 3, NULL, 16);
    else if (strncmp(argv[i], "off=", 4) == 0)
      g_off = strtoull(argv[i] + 4, NULL, 16);
    else if (strncmp(argv[i], "out=", 4) == 0) g_out = strdup(argv[i] + 4);
    else if (strncmp(argv[i], "prices=", 7) == 0) {
      if (read_prices(argv[i] + 7) != 0) return -1;
    } else if (strncmp(argv[i], "log=", 4) == 0) {
      if ((g_log = fopen(argv[i] + 4, "w")) == NULL) {
        fprintf(stderr, "cycles_plugin: cannot write %s\n", argv[i] + 4);
        return -1;
      }
    } else if (strncmp(argv[i], "regions=", 8) == 0) {
      FILE *f = fopen(argv[i] + 8, "r");
      if (f == NULL) {
        fprintf(stderr, "cycles_plugin: cannot read %s\n", argv[i] + 8);
        return -1;
      }
      unsigned long long a;
      size_t cap = 0;
      while (fscanf(f, "%llx", &a) == 1) {
        uint64_t *more = room(g_regions, g_nregions, &cap, sizeof *g_regions);
        if (more == NULL) {
          fclose(f);
          return -1;
        }
        g_regions = more;
        g_regions[g_nregions++] = a;
      }
      fclose(f);
      for (size_t k = 1; k < g_nregions; k++)
        if (g_regions[k] <= g_regions[k - 1]) {
          fprintf(stderr, "cycles_plugin: regions must ascend\n");
          return -1;
        }
    }
    else {
      fprintf(stderr, "cycles_plugin: unknown argument '%s' (on=, off=, "
                      "regions=, out=; or prices=, log=)\n",
              argv[i]);
      return -1;
    }
  }
  if (g_prices != NULL || g_log != NULL) { /* the session mode */
    if (g_prices == NULL || g_log == NULL) {
      fprintf(stderr, "cycles_plugin: the session mode needs both prices=PATH "
                      "and log=PATH\n");
      return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, priced_translated);
    return 0;
  }
  if (g_on == 0 || g_off == 0) {
    fprintf(stderr, "cycles_plugin: needs on=ADDR and off=ADDR\n");
    return -1;
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, block_translated);
  qemu_plugin_register_atexit_cb(id, report, NULL);
  return 0;
}
