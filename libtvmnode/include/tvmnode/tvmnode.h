/*
 * tvmnode/tvmnode.h: the whole public C API in one include.
 *
 * abi.h is the frozen ABI; the other headers add one layer each. Include a
 * single layer's header to depend on less.
 */
#ifndef TVMNODE_TVMNODE_H_
#define TVMNODE_TVMNODE_H_

#include "tvmnode/abi.h"        /* object header, TnAny, packed calls, errors */
#include "tvmnode/object.h"     /* life cycle, type registry, values */
#include "tvmnode/containers.h" /* String, Array, Map, Shape, Tensor, ... */
#include "tvmnode/function.h"   /* packed functions, registry, libffi bridge */
#include "tvmnode/reflect.h"    /* node types, structural eq/hash, JSON */
#include "tvmnode/node.h"       /* macros to declare node types from C */
#include "tvmnode/ir.h"         /* the tensor IR and its operators */
#include "tvmnode/pass.h"       /* passes, contexts, instruments */
#include "tvmnode/kernel.h"     /* lowering to kernels, programs */
#include "tvmnode/codegen.h"    /* memory planning, ahead-of-time C */

#endif /* TVMNODE_TVMNODE_H_ */
