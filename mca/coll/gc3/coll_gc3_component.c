/* coll/gc3: the component: its structure, its MCA parameters (registered from the table of
 * coll_gc3_params.h, checked at open), open and close. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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
static const mca_base_var_enum_value_t mca_coll_gc3_backend_values[]   = { { MCA_COLL_GC3_BACKEND_AUTO, "auto" },
                                                                           { MCA_COLL_GC3_BACKEND_CUDA, "cuda" },
                                                                           { MCA_COLL_GC3_BACKEND_HOST, "host" },
                                                                           { 0, NULL } };
static const mca_base_var_enum_value_t mca_coll_gc3_net_path_values[]  = { { GC3_NET_PATH_AUTO, "auto" },
                                                                           { GC3_NET_PATH_GPUDIRECT, "gpudirect" },
                                                                           { GC3_NET_PATH_STAGED, "staged" },
                                                                           { 0, NULL } };
static const mca_base_var_enum_value_t mca_coll_gc3_zero_copy_values[] = {
    { MCA_COLL_GC3_ZC_AUTO, "auto" }, { MCA_COLL_GC3_ZC_ON, "on" }, { MCA_COLL_GC3_ZC_OFF, "off" }, { 0, NULL }
};
static const mca_base_var_enum_value_t mca_coll_gc3_wait_values[]     = { { MCA_COLL_GC3_WAIT_FALSE, "false" },
                                                                          { MCA_COLL_GC3_WAIT_TRUE, "true" },
                                                                          { MCA_COLL_GC3_WAIT_HOST, "host" },
                                                                          { MCA_COLL_GC3_WAIT_DEVICE, "device" },
                                                                          { 0, NULL } };
static const mca_base_var_enum_value_t mca_coll_gc3_fallback_values[] = { { MCA_COLL_GC3_FALLBACK_AUTO, "auto" },
                                                                          { MCA_COLL_GC3_FALLBACK_STAGE, "stage" },
                                                                          { MCA_COLL_GC3_FALLBACK_PASS, "pass" },
                                                                          { MCA_COLL_GC3_FALLBACK_ERROR, "error" },
                                                                          { 0, NULL } };

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
    (void)mca_base_component_var_register(&mca_coll_gc3_component.super.collm_version, name, help, type, e, 0, 0, level,
                                          scope, storage);
    if (e != NULL) {
        OBJ_RELEASE(e);
    }
}

/* Each parameter of the table, from its default. */
#define GC3_PARAM_REGISTER(name, ctype, vtype, def, level, scope, hash, values, help)                                  \
    mca_coll_gc3_component.name = def;                                                                                 \
    mca_coll_gc3_register_param(#name, help, MCA_BASE_VAR_TYPE_##vtype, values, OPAL_INFO_LVL_##level,                 \
                                MCA_BASE_VAR_SCOPE_##scope, &mca_coll_gc3_component.name);

/* coll_gc3_enable_<name> of each row of the component's table (mca_coll_gc3_colls), in the settings hash */
static void mca_coll_gc3_register_enable(void)
{
    static char help[GC3_COLL_COUNT][192]; /* (kept: the variable system may refer to them) */

    for (int i = 0; i < mca_coll_gc3_ncolls; i++) {
        const mca_coll_gc3_coll_t *c = &mca_coll_gc3_colls[i];
        char                       name[64];
        snprintf(name, sizeof(name), "enable_%s", c->name);
        snprintf(help[c->coll], sizeof(help[c->coll]),
                 "Run MPI_%c%s with gc3%s%s (false: always pass it on, device buffers staged)",
                 mca_coll_gc3_mpi_initial(c->name), c->name + 1, c->when != NULL ? ", " : "",
                 c->when != NULL ? c->when : "");
        mca_coll_gc3_component.enable[c->coll] = true;
        mca_coll_gc3_register_param(name, help[c->coll], MCA_BASE_VAR_TYPE_BOOL, NULL, OPAL_INFO_LVL_6,
                                    MCA_BASE_VAR_SCOPE_READONLY, &mca_coll_gc3_component.enable[c->coll]);
    }
}

static int mca_coll_gc3_register(void)
{
    MCA_COLL_GC3_PARAMS(GC3_PARAM_REGISTER)
    mca_coll_gc3_register_enable();
    return OMPI_SUCCESS;
}

#define GC3_PARAM_HASH(name, ctype, vtype, def, level, scope, hash, ...)                                               \
    if (hash) {                                                                                                        \
        long v = (long)mca_coll_gc3_component.name;                                                                    \
        h      = gc3_fnv1a(h, &v, sizeof(v));                                                                          \
    }

uint64_t mca_coll_gc3_params_hash(uint64_t h)
{
    MCA_COLL_GC3_PARAMS(GC3_PARAM_HASH)
    for (int i = 0; i < mca_coll_gc3_ncolls; i++) {
        long v = (long)mca_coll_gc3_component.enable[mca_coll_gc3_colls[i].coll];
        h      = gc3_fnv1a(h, &v, sizeof(v));
    }
    return h;
}

/* A parameter's number as text: integers exactly (67108864, not 6.71089e+07), others as %g. */
static void gc3_param_num_text(char *buf, size_t len, double v)
{
    if (v == (double)(long long)v) {
        snprintf(buf, len, "%lld", (long long)v);
    } else {
        snprintf(buf, len, "%g", v);
    }
}

/* A parameter's message: every process reads the same parameters, the job's first says it. */
static void gc3_param_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void gc3_param_say(const char *fmt, ...)
{
    va_list ap;

    if (MCA_COLL_GC3_JOB_SAYS()) {
        va_start(ap, fmt);
        opal_output_vverbose(0, 0, fmt, ap); /* (Open MPI's output keeps a line whole) */
        va_end(ap);
    }
}

/* A numeric parameter given as something else (coll_gc3_timeout=abc) is read by Open MPI as 0,
 * silently (and a timeout of 0 waits forever), and one with trailing text (coll_gc3_verbose=1x) as
 * its leading number: the text given in the environment, where mpirun --mca and OMPI_MCA_ put it,
 * must be a number (an integer, with Open MPI's k/m/g suffixes, for the integer ones). Such a value
 * is reported and the default used instead, before gc3 uses any parameter (the message says what
 * gc3 does). (A parameter file's text is not kept by Open MPI where a component can read it: values
 * from files are not checked so.) The value's text when it is not a number, else NULL. */
static const char *mca_coll_gc3_not_a_number(const char *name, mca_base_var_type_t type)
{
    char        env[96];
    const char *v;
    char       *end = NULL;

    snprintf(env, sizeof(env), "OMPI_MCA_coll_gc3_%s", name); /* (names of the table: short) */
    v = getenv(env);
    if (v == NULL) {
        return NULL;
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
    return end != v && *end == '\0' && errno == 0 ? NULL : v;
}

static void mca_coll_gc3_say_not_a_number(const char *name, mca_base_var_type_t type, const char *text, double def)
{
    char num[32];

    gc3_param_num_text(num, sizeof(num), def);
    gc3_param_say("coll:gc3: coll_gc3_%s=%s is not %s: using the default, %s", name, text,
                  type == MCA_BASE_VAR_TYPE_DOUBLE ? "a number" : "an integer", num);
}

/* An enumerated or boolean parameter given as something else (coll_gc3_backend=hostx): Open MPI
 * reports the value invalid and keeps the default; gc3 says which value it uses. The value's text
 * when Open MPI does not take it (one of the names in any case, or a number: of a value, or any for
 * a boolean), else NULL. */
static const char *mca_coll_gc3_not_a_value(const char *name, const mca_base_var_enum_value_t *values)
{
    static const char *const bools[] = { "t", "true", "enabled", "yes", "y", "f", "false", "disabled", "no", "n" };
    char                     env[96], *end = NULL;
    const char              *v;
    long                     n;

    snprintf(env, sizeof(env), "OMPI_MCA_coll_gc3_%s", name);
    if ((v = getenv(env)) == NULL) {
        return NULL;
    }
    errno = 0;
    n     = strtol(v, &end, 0);
    for (int i = 0; values == NULL && i < (int)(sizeof(bools) / sizeof(bools[0])); i++) {
        if (strcasecmp(v, bools[i]) == 0) {
            return NULL;
        }
    }
    if (end != v && *end == '\0' && errno == 0 && values == NULL) {
        return NULL;
    }
    for (int i = 0; values != NULL && values[i].string != NULL; i++) {
        if (strcasecmp(v, values[i].string) == 0 || (end != v && *end == '\0' && errno == 0 && n == values[i].value)) {
            return NULL;
        }
    }
    return v;
}

static void mca_coll_gc3_say_not_a_value(const char *name, const mca_base_var_enum_value_t *values, const char *text,
                                         int def)
{
    char *names = NULL;
    int   ok    = 1;

    for (int i = 0; values != NULL && values[i].string != NULL; i++) {
        ok = ok && gc3_str_appendf(&names, "%s%s", i ? ", " : "", values[i].string) == GC3_OK;
    }
    for (int i = 0; values != NULL && values[i].string != NULL; i++) {
        if (values[i].value == def) {
            gc3_param_say("coll:gc3: coll_gc3_%s=%s is not one of %s: using the default, %s", name, text,
                          ok ? names : "its values", values[i].string);
        }
    }
    if (values == NULL) {
        gc3_param_say("coll:gc3: coll_gc3_%s=%s is not true or false: using the default, %s", name, text,
                      def ? "true" : "false");
    }
    free(names);
}

#define GC3_PARAM_VALUE(name, ctype, vtype, def, level, scope, hash, values, help)                                     \
    if ((values != NULL || MCA_BASE_VAR_TYPE_##vtype == MCA_BASE_VAR_TYPE_BOOL) &&                                     \
        (text = mca_coll_gc3_not_a_value(#name, values)) != NULL) {                                                    \
        c->name = def;                                                                                                 \
        mca_coll_gc3_say_not_a_value(#name, values, text, (int)GC3_PARAM_NUM(def));                                    \
    }

#define GC3_PARAM_IS_NUMBER(vtype)                                                                                     \
    (MCA_BASE_VAR_TYPE_##vtype == MCA_BASE_VAR_TYPE_INT || MCA_BASE_VAR_TYPE_##vtype == MCA_BASE_VAR_TYPE_LONG ||      \
     MCA_BASE_VAR_TYPE_##vtype == MCA_BASE_VAR_TYPE_DOUBLE)
#define GC3_PARAM_NUMBER(name, ctype, vtype, def, level, scope, hash, values, help)                                    \
    if (GC3_PARAM_IS_NUMBER(vtype) && values == NULL &&                                                                \
        (text = mca_coll_gc3_not_a_number(#name, MCA_BASE_VAR_TYPE_##vtype)) != NULL) {                                \
        c->name = def;                                                                                                 \
        mca_coll_gc3_say_not_a_number(#name, MCA_BASE_VAR_TYPE_##vtype, text, GC3_PARAM_NUM(def));                     \
    }

/* A parameter's value as a number (strings: 0, never asked), and as text for the verbose 2 list. */
static double gc3_num_str(const char *s)
{
    (void)s;
    return 0;
}
static double gc3_num(double v)
{
    return v;
}
#define GC3_PARAM_NUM(v) _Generic((v), char * : gc3_num_str, const char * : gc3_num_str, default : gc3_num)(v)
static char *gc3_param_text(const char *s)
{
    return gc3_strdup_printf("'%s'", s ? s : "");
}
static char *gc3_param_num_str(double v)
{
    char num[32];
    gc3_param_num_text(num, sizeof(num), v);
    return gc3_strdup_printf("%s", num);
}
/* an enumerated parameter's value by its name (backend=host, not backend=2); NULL for the others */
static char *gc3_param_enum_text(double v, const mca_base_var_enum_value_t *values)
{
    for (int i = 0; values != NULL && values[i].string != NULL; i++) {
        if (values[i].value == (int)v) {
            return gc3_strdup_printf("%s", values[i].string);
        }
    }
    return NULL;
}
#define GC3_PARAM_LIST(name, ctype, vtype, def, level, scope, hash, values, help)                                      \
    v  = gc3_param_enum_text(GC3_PARAM_NUM(c->name), values);                                                          \
    v  = v != NULL ? v : _Generic((c->name), char  *: gc3_param_text, default : gc3_param_num_str)(c->name);           \
    ok = ok && v != NULL && gc3_str_appendf(&line, " %s=%s", #name, v) == GC3_OK;                                      \
    free(v);

/* At verbose 2: every parameter as gc3 uses it (after the checks below), said by the job's first
 * process (every process at verbose 3). */
static void mca_coll_gc3_list_params(void)
{
    const mca_coll_gc3_component_t *c    = &mca_coll_gc3_component;
    char                           *line = NULL, *v;
    int                             ok   = 1;

    if (c->verbose >= 2 && MCA_COLL_GC3_JOB_SAYS()) {
        MCA_COLL_GC3_PARAMS(GC3_PARAM_LIST)
        for (int i = 0; i < mca_coll_gc3_ncolls; i++) {
            ok = ok && gc3_str_appendf(&line, " enable_%s=%d", mca_coll_gc3_colls[i].name,
                                       (int)c->enable[mca_coll_gc3_colls[i].coll]) == GC3_OK;
        }
        opal_output(0, "coll:gc3: parameters in use:%s", ok ? line : " (out of host memory)");
    }
    free(line);
}

/* Values outside what gc3 can use are reported (by the job's first process) and replaced by the
 * default, instead of failing every plan later without a word. */
static void mca_coll_gc3_check_params(void)
{
    mca_coll_gc3_component_t *c = &mca_coll_gc3_component;
    const char               *text;

    /* the verbosity first: who says the messages below depends on it (coll_gc3_verbose=3x: the job's
     * first process, as with 0) */
    if (mca_coll_gc3_not_a_number("verbose", MCA_BASE_VAR_TYPE_INT) != NULL) {
        c->verbose = 0;
    }
    MCA_COLL_GC3_PARAMS(GC3_PARAM_NUMBER)
    for (int i = 0; i < mca_coll_gc3_ncolls; i++) {
        char name[64];
        snprintf(name, sizeof(name), "enable_%s", mca_coll_gc3_colls[i].name);
        if ((text = mca_coll_gc3_not_a_value(name, NULL)) != NULL) {
            c->enable[mca_coll_gc3_colls[i].coll] = true;
            mca_coll_gc3_say_not_a_value(name, NULL, text, 1);
        }
    }
    MCA_COLL_GC3_PARAMS(GC3_PARAM_VALUE)

    if (c->fifo_slots < 2 || c->fifo_slots > 1024) {
        gc3_param_say("coll:gc3: coll_gc3_fifo_slots=%d is outside 2..1024: using %d", c->fifo_slots,
                      GC3_FIFO_SLOTS_DEFAULT);
        c->fifo_slots = GC3_FIFO_SLOTS_DEFAULT;
    }
    if (c->slot_bytes != 0 && (c->slot_bytes < 4096 || c->slot_bytes > (1 << 30))) {
        gc3_param_say("coll:gc3: coll_gc3_slot_bytes=%d is outside 4096..1073741824 (0: the backend's default): "
                      "using the default",
                      c->slot_bytes);
        c->slot_bytes = 0;
    }
    if (!(c->timeout >= 0)) { /* negative or NaN */
        gc3_param_say("coll:gc3: coll_gc3_timeout=%g is negative: using 300 s (0 waits forever)", c->timeout);
        c->timeout = 300.0;
    }
    if (c->yield_us < 0) {
        gc3_param_say("coll:gc3: coll_gc3_yield_us=%d is negative: using %d (0 never gives way)", c->yield_us,
                      GC3_YIELD_US_DEFAULT);
        c->yield_us = GC3_YIELD_US_DEFAULT;
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
    if (c->zero_copy_fifo_bytes < 0) {
        gc3_param_say("coll:gc3: coll_gc3_zero_copy_fifo_bytes=%ld is negative: using %ld (0: no cap of its own)",
                      c->zero_copy_fifo_bytes, (long)GC3_ZC_FIFO_BYTES_DEFAULT);
        c->zero_copy_fifo_bytes = GC3_ZC_FIFO_BYTES_DEFAULT;
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
    mca_coll_gc3_check_params(); /* (a verbosity that is not a number is 0 from here on) */
    opal_output_set_verbosity(mca_coll_gc3_component.output, mca_coll_gc3_component.verbose);
    mca_coll_gc3_list_params();
    opal_progress_register(mca_coll_gc3_progress); /* completes gc3's nonblocking calls */
    return OMPI_SUCCESS;
}

static int mca_coll_gc3_close(void)
{
    opal_progress_unregister(mca_coll_gc3_progress);
    gc3_exec_quiesce(); /* no thread of gc3's left running in the code about to be unloaded */
    gc3_rules_destroy(mca_coll_gc3_component.rules);
    mca_coll_gc3_component.rules = NULL;
    if (mca_coll_gc3_component.output >= 0) {
        opal_output_close(mca_coll_gc3_component.output);
        mca_coll_gc3_component.output = -1;
    }
    return OMPI_SUCCESS;
}
