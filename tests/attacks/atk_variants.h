/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* atk_variants.h - shared bodies of the attacks that come in variants, one module per class of
 * channel (atkv_*.c, each with its header stating every function's contract). Each takes the
 * variant; the attack file passes it and keeps its own name, channel line and header comment
 * (what it tries, how it is verified, what blocks it). Attacks include this header only. */
#ifndef MNC_ATK_VARIANTS_H
#define MNC_ATK_VARIANTS_H

#include "atkv_sinks.h"
#include "atkv_keeper.h"
#include "atkv_host.h"
#include "atkv_diag.h"
#include "atkv_rest.h"
#include "atkv_restart.h"
#include "atkv_records.h"

#endif
