/* coll/gc3: component structure and MCA parameters. */
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "opal/mca/base/mca_base_var.h"

const char *mca_coll_gc3_component_version_string = "Open MPI gc3 collective MCA component version " GC3_VERSION_STRING;

static int mca_coll_gc3_register(void);
static int mca_coll_gc3_open(void);
static int mca_coll_gc3_close(void);

mca_coll_gc3_component_t mca_coll_gc3_component = {
    .super = {
        .collm_version = {
            MCA_COLL_BASE_VERSION_2_0_0,
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
    .priority = 0,
    .verbose = 0,
    .output = -1,
};

static int mca_coll_gc3_register(void)
{
    mca_base_component_t *c = &mca_coll_gc3_component.super.collm_version;

    mca_coll_gc3_component.priority = 0;
    (void)mca_base_component_var_register(c, "priority",
        "Priority of coll/gc3. It takes the collectives it implements only when its priority is above the "
        "other coll components of the communicator (tuned: 30), e.g. 90; a negative value disables it",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.priority);
    mca_coll_gc3_component.verbose = 0;
    (void)mca_base_component_var_register(c, "verbose",
        "Verbosity of coll/gc3: 0 silent; 1 a collective that no other component provides; "
        "2 also a communicator where one is missing; 3 every communicator gc3 is queried for and enabled on",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_LOCAL,
        &mca_coll_gc3_component.verbose);
    return OMPI_SUCCESS;
}

static int mca_coll_gc3_open(void)
{
    mca_coll_gc3_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_coll_gc3_component.output, mca_coll_gc3_component.verbose);
    return OMPI_SUCCESS;
}

static int mca_coll_gc3_close(void)
{
    if (mca_coll_gc3_component.output >= 0) {
        opal_output_close(mca_coll_gc3_component.output);
        mca_coll_gc3_component.output = -1;
    }
    return OMPI_SUCCESS;
}
