//===- Projection.h - mesh axes onto sharding-rule factors -------*- C++
//-*-===//
//
// A sharding rule describes each tensor dimension as one or more factors
// (a reshape's merged dimension [2*16] is the factors 2 and 16, major
// first). Propagation and partitioning both move mesh axes between
// dimensions and factors; this is the one place that says how:
//
//  * a dimension of one factor gives it all its axes (an uneven split is
//    allowed: the last block is padded);
//  * a dimension of several factors gives each factor, major to minor, the
//    axes that divide what is left of it. An axis that divides it only in
//    part is cut into sub-axes (tessel/support/Mesh.h): with "a" of size 4
//    over factors 2 and 16, the 2 takes "a":(1)2 and the 16 "a":(2)2. The
//    split ends at an axis that fits nothing, and a minor factor takes axes
//    only once the more major ones are fully split;
//  * back from factors to a dimension, the factors' axes are concatenated
//    under the same conditions and written canonically (adjacent sub-axes
//    that continue each other merged, so the example gives "a" again).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SHARDING_PROJECTION_H
#define TESSEL_SHARDING_PROJECTION_H

#include "tessel/dialects/tessel/TesselOps.h"

namespace mlir::tessel {

using AxisList = SmallVector<StringAttr, 2>;

/// Splits the axes of a dimension made of factors of `factorSizes` (major
/// to minor) over those factors; one list per factor.
SmallVector<AxisList, 2> splitAxesOverFactors(MeshOp mesh,
                                              ArrayRef<int64_t> factorSizes,
                                              ArrayRef<StringAttr> axes);

/// The axes of a dimension made of factors of `factorSizes` whose factors
/// are split over `perFactor`: concatenated major to minor while each
/// factor's axes divide it (for several factors) and up to the first factor
/// not fully split, then canonical.
AxisList joinFactorAxes(MeshOp mesh, ArrayRef<int64_t> factorSizes,
                        ArrayRef<AxisList> perFactor);

/// `axes` with adjacent sub-axes of one axis that continue each other
/// merged, and a sub-axis covering its whole axis written as the axis.
AxisList canonicalAxes(MeshOp mesh, ArrayRef<StringAttr> axes);

/// Whether `axis` cannot be used beside one of `others` (the same axis,
/// or sub-axes of one axis that overlap or do not nest: ::tessel::
/// axesConflict).
bool conflictsWithAny(StringAttr axis, ArrayRef<StringAttr> others);

/// `{"dp", "tp":(2)2}`: a dimension's axes as a sharding writes them, for
/// messages.
std::string formatAxes(ArrayRef<StringAttr> axes);

} // namespace mlir::tessel

#endif // TESSEL_SHARDING_PROJECTION_H
