//===- Tessel.h - Tessel's public API in one include ----------------------===//
//
// For code outside the tree (plugins, tools; docs/extending.md): the tessel
// dialect with its ops, attributes and interfaces (sharding rules, VJPs,
// collectives), the sharding-rule builder, the registration of Tessel's
// passes and pipelines, plugin support and the version. Link Tessel::Tessel
// (find_package(Tessel)). Everything under include/tessel/ is public API;
// lib/ is not.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_TESSEL_H
#define TESSEL_TESSEL_H

#include "tessel/Plugin.h"
#include "tessel/Version.h"
#include "tessel/dialects/tessel/ShardingRule.h"
#include "tessel/dialects/tessel/TesselDialect.h"
#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/lowering/Lowering.h"
#include "tessel/passes/Passes.h"

#endif // TESSEL_TESSEL_H
