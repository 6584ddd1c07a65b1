/*
 * insn_count_plugin.c: a qemu TCG plugin that counts the guest
 * instructions a process executes between two marks it makes, for
 * bench_x86_emulated.py (qemu-x86_64 -cpu Haswell: a CPU with AVX2 and
 * no AVX-512, on which every library picks its AVX2 forms by CPUID).
 *
 * The marks are calls of a system call that does not exist (number
 * MARK, default 0x7ff0; the emulator answers ENOSYS): syscall(MARK, 1)
 * opens the window, syscall(MARK, 0) closes it, and every window's
 * instructions add up. Arguments: out=PATH, where the counts go at exit
 * ("window N" then "total N"); mark=NUM.
 *
 * Debian's qemu 7.2 loads plugins but ships no qemu-plugin.h, so the
 * functions of plugin API version 1 used here are declared below, as
 * that header declares them (firmware/common/cycles_plugin.c does the
 * same). Build: cc -O2 -shared -fPIC. Each translation block adds its
 * instruction count inline when it starts to run, and a block ends at a
 * system call, so a window is exact to the few instructions of the
 * blocks that hold its two marks. The count is one 64-bit word shared by
 * the process's threads: exact for the one-thread runs it is used for.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- plugin API version 1 (qemu 7.2's include/qemu/qemu-plugin.h) ---- */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
                                               struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_syscall_cb_t)(
    qemu_plugin_id_t id, unsigned int vcpu_index, int64_t num, uint64_t a1,
    uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
    uint64_t a7, uint64_t a8);
void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id,
                                          qemu_plugin_vcpu_syscall_cb_t cb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
                                              enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
                                    qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t g_count, g_window, g_opened;
static int g_open;
static int64_t g_mark = 0x7ff0;
static char *g_out;

static void syscalled(qemu_plugin_id_t id, unsigned int vcpu, int64_t num,
                      uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
                      uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8) {
  (void)id, (void)vcpu, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6;
  (void)a7, (void)a8;
  if (num != g_mark) return;
  if (a1 && !g_open) g_open = 1, g_opened = g_count;
  else if (!a1 && g_open) g_open = 0, g_window += g_count - g_opened;
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                           &g_count,
                                           qemu_plugin_tb_n_insns(tb));
}

static void report(qemu_plugin_id_t id, void *userdata) {
  (void)id, (void)userdata;
  FILE *f = fopen(g_out, "w");
  if (f == NULL) {
    fprintf(stderr, "insn_count_plugin: cannot write %s\n", g_out);
    return;
  }
  fprintf(f, "window %" PRIu64 "\ntotal %" PRIu64 "\n", g_window, g_count);
  fclose(f);
}

__attribute__((visibility("default"))) int qemu_plugin_install(
    qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
  (void)info;
  for (int i = 0; i < argc; i++)
    if (strncmp(argv[i], "out=", 4) == 0) g_out = strdup(argv[i] + 4);
    else if (strncmp(argv[i], "mark=", 5) == 0)
      g_mark = strtoll(argv[i] + 5, NULL, 0);
  if (g_out == NULL) {
    fprintf(stderr, "insn_count_plugin: expected out=PATH\n");
    return -1;
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
  qemu_plugin_register_vcpu_syscall_cb(id, syscalled);
  qemu_plugin_register_atexit_cb(id, report, NULL);
  return 0;
}
