/*-------------------------------------------------------------------------
 *
 * skyline_band.h
 *	  The skyline steps that odp_skyline, odp_node_skyline and the
 *	  distributed skyline share.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/skyline_band.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SKYLINE_BAND_H
#define ODP_SKYLINE_BAND_H

#include "input/input.h"
#include "utils/array.h"

/*
 * Parses a directions argument into one flag per entry (1 = max), and
 * checks their number against the features read.
 */
extern uint8 *OdpSkylineParseDirections(ArrayType *arr, int *nentries);
extern void OdpSkylineCheckDirections(int nentries, const OdpInput *in);

/*
 * Reads spec and keeps its rows that fewer than band of its rows dominate,
 * in place, by id.  An empty source gives no rows.
 */
extern void OdpSkylineBandRows(const OdpInputSpec *spec, const uint8 *maximize,
							   int nentries, int32 band, OdpInput *band_rows);

#endif							/* ODP_SKYLINE_BAND_H */
