/* The headers bindgen reads to regenerate src/functions.rs (see regen.sh). */
#include <tvmnode/c_api.h>
#include <tvmnode/ir.h>
