/* The headers bindgen reads to regenerate src/functions.rs (see regen.sh). */
#include <tvmnode/tvmnode.h>
