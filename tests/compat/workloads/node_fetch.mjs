// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fetch (undici): a GET and a POST to the sink on one keep-alive connection.
import * as compat from "./compat.mjs";

try {
  const r = await fetch(compat.SINK);
  compat.check((await r.text()) === "pong\n", "GET");
} catch (e) {
  compat.refused(e);
}
await compat.report();
