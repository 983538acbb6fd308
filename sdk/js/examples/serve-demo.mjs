// Serves the browser example on 127.0.0.1 (make serve-demo): the package's
// build at /webtensor/, the page at /. PORT picks the port (default 8080).

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "../test/browser/serve.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const port = Number(process.env.PORT ?? 8080);
const { url } = await serve({ "/webtensor/": join(here, ".."), "/": join(here, "browser") }, port);
console.log(`webtensor demo: open ${url}/ in a browser with WebGPU (Chrome, Edge; Firefox or Safari with it on)`);
console.log("it trains on the page's GPU and draws the loss; Ctrl-C stops the server");
