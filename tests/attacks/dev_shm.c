// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* dev_shm - POSIX shm (/dev/shm file, 0666) (our addition): shared writable directories any user reads.
 * Verifier: uid 65534 reads /dev/shm/mnc-atk-PID after the agent exited.
 * Blocks it: Landlock (writes only in the workspace). */
#include "atk_variants.h"

static int prepare(struct atk_ctx *c) { return atkv_shared_file_prepare(c, "/dev/shm"); }

static const struct atk A = {"dev_shm",
                             "POSIX shm (/dev/shm file, 0666)",
                             0,
                             prepare,
                             atkv_shared_file_agent,
                             NULL,
                             atkv_shared_file_verify,
                             atkv_shared_file_cleanup};
ATK_MAIN(A)
