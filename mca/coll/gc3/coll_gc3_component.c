/* coll/gc3: the component: its structure, its MCA parameters (registered from the table of
 * coll_gc3_params.h, checked at open), open and close. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_progress.h"

const char *mca_coll_gc3_component_version_string = "Open MPI gc3 collective MCA component version " GC3_VERSION_STRING;

static int mca_coll_gc3_register(void);
static int mca_coll_gc3_open(void);
static int mca_coll_gc3_close(void);

#define GC3_PARAM_INIT(name, ctype, vtype, def, ...) .name = def,

mca_coll_gc3_component_t mca_coll_gc3_component = {
    .super = {
        .collm_version = {
            MCA_COLL_GC3_BASE_VERSION,
            .mca_component_name = "gc3",
            MCA_BASE_MAKE_VERSION(component, GC3_VERSION_MAJOR, GC3_VERSION_MINOR, GC3_VERSION_RELEASE),
            .mca_open_component = mca_coll_gc3_open,
            .mca_close_component = mca_coll_gc3_close,
            .mca_register_component_params = mca_coll_gc3_register,
        },
        .collm_data = {
            MCA_BASE_METADATA_PARAM_CHECKPOINT
        },
        .collm_init_query = mca_coll_gc3_init_query,
        .collm_comm_query = mca_coll_gc3_comm_query,
    },
    .output = -1,
    MCA_COLL_GC3_PARAMS(GC3_PARAM_INIT)
};

/* the named values of the enumerated parameters (ompi_info lists the names) */
static const mca_base_var_enum_value_t mca_coll_gc3_backend_values[] = {
    {MCA_COLL_GC3_BACKEND_AUTO, "auto"}, {MCA_COLL_GC3_BACKEND_CUDA, "cuda"}, {MCA_COLL_GC3_BACKEND_HOST, "host"},
    {0, NULL}};
static const mca_base_var_enum_value_t mca_coll_gc3_net_path_values[] = {
    {GC3_NET_PATH_AUTO, "auto"}, {GC3_NET_PATH_GPUDIRECT, "gpudirect"}, {GC3_NET_PATH_STAGED, "staged"}, {0, NULL}};
static const mca_base_var_enum_value_t mca_coll_gc3_zero_copy_values[] = {
    {MCA_COLL_GC3_ZC_AUTO, "auto"}, {MCA_COLL_GC3_ZC_ON, "on"}, {MCA_COLL_GC3_ZC_OFF, "off"}, {0, NULL}};
static const mca_base_var_enum_value_t mca_coll_gc3_fallback_values[] = {
    {MCA_COLL_GC3_FALLBACK_STAGE, "stage"}, {MCA_COLL_GC3_FALLBACK_PASS, "pass"},
    {MCA_COLL_GC3_FALLBACK_ERROR, "error"}, {0, NULL}};

/* One parameter (values: its named values, or NULL). */
static void mca_coll_gc3_register_param(const char *name, const char *help, mca_base_var_type_t type,
                                        const mca_base_var_enum_value_t *values, mca_base_var_info_lvl_t level,
                                        mca_base_var_scope_t scope, void *storage)
{
    char                 enum_name[64];
    mca_base_var_enum_t *e = NULL;

    if (values != NULL) {
        snprintf(enum_name, sizeof(enum_name), "coll_gc3_%s_values", name);
        mca_base_var_enum_create(enum_name, values, &e);
    }
    (void)mca_base_component_var_register(&mca_coll_gc3_component.super.collm_version, name, help, type, e, 0, 0,
                                          level, scope, storage);
    if (e != NULL) {
        OBJ_RELEASE(e);
    }
}

/* Each parameter of the table, from its default. */
#define GC3_PARAM_REGISTER(name, ctype, vtype, def, level, scope, hash, values, help)                               \
    mca_coll_gc3_component.name = def;                                                                             \
    mca_coll_gc3_register_param(#name, help, MCA_BASE_VAR_TYPE_##vtype, values, OPAL_INFO_LVL_##level,             \
                                MCA_BASE_VAR_SCOPE_##scope, &mca_coll_gc3_component.name);

static int mca_coll_gc3_register(void)
{
    MCA_COLL_GC3_PARAMS(GC3_PARAM_REGISTER)
    return OMPI_SUCCESS;
}

#define GC3_PARAM_HASH(name, ctype, vtype, def, level, scope, hash, ...) \
    if (hash) {                                                          \
        long v = (long)mca_coll_gc3_component.name;                      \
        h      = gc3_fnv1a(h, &v, sizeof(v));                            \
    }

uint64_t mca_coll_gc3_params_hash(uint64_t h)
{
    MCA_COLL_GC3_PARAMS(GC3_PARAM_HASH)
    return h;
}

/* A parameter's message: every process reads the same parameters, the job's first says it. */
/* A parameter's number as text: integers exactly (67108864, not 6.71089e+07), others as %g. */
static void gc3_param_num_text(char *buf, size_t len, double v)
{
    if (v == (double)(long long)v) {
        snprintf(buf, len, "%lld", (long long)v);
    } else {
        snprintf(buf, len, "%g", v);
    }
}

static void gc3_param_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void gc3_param_say(const char *fmt, ...)
{
    char    line[512];
    va_list ap;

    if (MCA_COLL_GC3_JOB_SAYS()) {
        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        opal_output(0, "%s", line);
    }
}

/* A numeric parameter given as something else (coll_gc3_timeout=abc) is read by Open MPI as 0,
 * silently (and a timeout of 0 waits forever): the text given in the environment, where mpirun
 * --mca and OMPI_MCA_ put it, must be a number (an integer, with Open MPI's k/m/g suffixes, for
 * the integer ones). Such a value is reported and the default kept. (A parameter file's text is
 * not kept by Open MPI where a component can read it: values from files are not checked so.) */
static int mca_coll_gc3_not_a_number(const char *name, mca_base_var_type_t type, double def)
{
    char        env[96], text[32];
    const char *v;
    char       *end = NULL;

    snprintf(env, sizeof(env), "OMPI_MCA_coll_gc3_%s", name);
    v = getenv(env);
    if (v == NULL) {
        return 0;
    }
    errno = 0;
    if (type == MCA_BASE_VAR_TYPE_DOUBLE) {
        (void)strtod(v, &end);
    } else {
        (void)strtoll(v, &end, 0);
        if (end != v && *end != '\0' && strchr("kKmMgG", *end) != NULL) {
            end++;
        }
    }
    while (end != NULL && end != v && isspace((unsigned char)*end)) {
        end++;
    }
    if (end != v && *end == '\0' && errno == 0) {
        return 0;
    }
    gc3_param_num_text(text, sizeof(text), def);
    gc3_param_say("coll:gc3: coll_gc3_%s=%s is not %s: using the default, %s", name, v,
                  type == MCA_BASE_VAR_TYPE_DOUBLE ? "a number" : "an integer", text);
    return 1;
}

#define GC3_PARAM_NUMBER(name, ctype, vtype, def, level, scope, hash, values, help)                              \
    if ((MCA_BASE_VAR_TYPE_##vtype == MCA_BASE_VAR_TYPE_INT || MCA_BASE_VAR_TYPE_##vtype == MCA_BASE_VAR_TYPE_LONG || \
         MCA_BASE_VAR_TYPE_##vtype == MCA_BASE_VAR_TYPE_DOUBLE) &&                                                \
        values == NULL && mca_coll_gc3_not_a_number(#name, MCA_BASE_VAR_TYPE_##vtype, GC3_PARAM_NUM(def))) {    \
        c->name = def;                                                                                          \
    }

/* A parameter's value as a number (strings: 0, never asked), and as text for the verbose 2 list. */
static double gc3_num_str(const char *s) { (void)s; return 0; }
static double gc3_num(double v) { return v; }
#define GC3_PARAM_NUM(v) _Generic((v), char *: gc3_num_str, const char *: gc3_num_str, default: gc3_num)(v)
static void gc3_param_text(char *buf, size_t len, const char *s) { snprintf(buf, len, "'%s'", s ? s : ""); }
#define GC3_PARAM_LIST(name, ...)                                                                               \
    _Generic((c->name), char *: gc3_param_text, default: gc3_param_num_text)(v, sizeof(v), c->name);           \
    n += snprintf(line + n, n < sizeof(line) ? sizeof(line) - n : 0, " %s=%s", #name, v);

/* At verbose 2: every parameter as gc3 uses it (after the checks below), said by the job's first
 * process (every process at verbose 3). */
static void mca_coll_gc3_list_params(void)
{
    const mca_coll_gc3_component_t *c = &mca_coll_gc3_component;
    char                            line[2048], v[600];
    size_t                          n = 0;

    if (c->verbose >= 2 && MCA_COLL_GC3_JOB_SAYS()) {
        MCA_COLL_GC3_PARAMS(GC3_PARAM_LIST)
        opal_output(0, "coll:gc3: parameters in use:%s", line);
    }
}

/* Values outside what gc3 can use are reported (by the job's first process) and replaced by the
 * default, instead of failing every plan later without a word. */
static void mca_coll_gc3_check_params(void)
{
    mca_coll_gc3_component_t *c = &mca_coll_gc3_component;

    MCA_COLL_GC3_PARAMS(GC3_PARAM_NUMBER)

    if (c->fifo_slots < 2 || c->fifo_slots > 1024) {
        gc3_param_say("coll:gc3: coll_gc3_fifo_slots=%d is outside 2..1024: using %d", c->fifo_slots,
                      GC3_FIFO_SLOTS_DEFAULT);
        c->fifo_slots = GC3_FIFO_SLOTS_DEFAULT;
    }
    if (c->slot_bytes != 0 && (c->slot_bytes < 4096 || c->slot_bytes > (1 << 30))) {
        gc3_param_say("coll:gc3: coll_gc3_slot_bytes=%d is outside 4096..1073741824 (0: the backend's default): "
                    "using the default", c->slot_bytes);
        c->slot_bytes = 0;
    }
    if (!(c->timeout >= 0)) { /* negative or NaN */
        gc3_param_say("coll:gc3: coll_gc3_timeout=%g is negative: using 300 s (0 waits forever)", c->timeout);
        c->timeout = 300.0;
    }
    if (c->resident_us < 0) {
        gc3_param_say("coll:gc3: coll_gc3_resident_us=%d is negative: using %d (0 launches a kernel per call)",
                    c->resident_us, GC3_RESIDENT_US_DEFAULT);
        c->resident_us = GC3_RESIDENT_US_DEFAULT;
    }
    if (c->reg_cache < 1 || c->reg_cache > GC3_REG_ENTRIES_MAX) {
        gc3_param_say("coll:gc3: coll_gc3_reg_cache=%d is outside 1..%d: using %d", c->reg_cache, GC3_REG_ENTRIES_MAX,
                      GC3_REG_ENTRIES_DEFAULT);
        c->reg_cache = GC3_REG_ENTRIES_DEFAULT;
    }
    if (c->tile_bytes < 4096) {
        gc3_param_say("coll:gc3: coll_gc3_tile_bytes=%ld is below 4096: using %ld", c->tile_bytes,
                      (long)GC3_TILE_BYTES_DEFAULT);
        c->tile_bytes = GC3_TILE_BYTES_DEFAULT;
    }
    if (c->pseudo_nodes < 0) {
        gc3_param_say("coll:gc3: coll_gc3_pseudo_nodes=%d is negative: off (0)", c->pseudo_nodes);
        c->pseudo_nodes = 0;
    }
    if (c->plan_fifo_bytes < 0) {
        gc3_param_say("coll:gc3: coll_gc3_plan_fifo_bytes=%ld is negative: using %ld (0: no cap)", c->plan_fifo_bytes,
                    (long)GC3_PLAN_FIFO_BYTES_DEFAULT);
        c->plan_fifo_bytes = GC3_PLAN_FIFO_BYTES_DEFAULT;
    }
    if (c->memory_budget < 0) {
        gc3_param_say("coll:gc3: coll_gc3_memory_budget=%ld is negative: using the default (0)", c->memory_budget);
        c->memory_budget = 0;
    }
    if (c->max_blocks < 0) {
        gc3_param_say("coll:gc3: coll_gc3_max_blocks=%d is negative: what the GPU holds (0)", c->max_blocks);
        c->max_blocks = 0;
    }
    if (c->max_bytes < 0) {
        gc3_param_say("coll:gc3: coll_gc3_max_bytes=%ld is negative: no limit (0)", c->max_bytes);
        c->max_bytes = 0;
    }
}

static int mca_coll_gc3_open(void)
{
    if (mca_coll_gc3_check_release() != OMPI_SUCCESS) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    mca_coll_gc3_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_coll_gc3_component.output, mca_coll_gc3_component.verbose);
    mca_coll_gc3_check_params();
    mca_coll_gc3_list_params();
    opal_progress_register(mca_coll_gc3_progress); /* completes gc3's nonblocking calls */
    return OMPI_SUCCESS;
}

static int mca_coll_gc3_close(void)
{
    opal_progress_unregister(mca_coll_gc3_progress);
    gc3_rules_destroy(mca_coll_gc3_component.rules);
    mca_coll_gc3_component.rules = NULL;
    if (mca_coll_gc3_component.output >= 0) {
        opal_output_close(mca_coll_gc3_component.output);
        mca_coll_gc3_component.output = -1;
    }
    return OMPI_SUCCESS;
}
