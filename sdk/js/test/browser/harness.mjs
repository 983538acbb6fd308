// The Node side of every browser run (tests, conformance columns, the
// benchmark): serve the installed package, the test files and the
// reference vectors on 127.0.0.1, open the test page in headless Chromium,
// and hand back the page to drive.

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { launch } from "./chromium.mjs";
import { serve } from "./serve.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/** The installed webtensor package's folder (node_modules/webtensor next to the tests, or $WEBTENSOR_PACKAGE). */
export function packageDir() {
  if (process.env.WEBTENSOR_PACKAGE) return process.env.WEBTENSOR_PACKAGE;
  const require = createRequire(join(here, "..", "x.js"));
  return dirname(require.resolve("webtensor/package.json"));
}

/**
 * Runs fn({page, url, logs}) on the test page (the package initialised by
 * nothing yet). opts.browserArgs adds Chromium flags; opts.initScript runs in
 * the page before its scripts (to hide navigator.gpu, say); opts.extraRoots
 * serves more folders. Closes everything afterwards.
 */
export async function withPage(fn, opts = {}) {
  const vectors = process.env.WEBTENSOR_VECTORS ?? join(here, "..", "..", "..", "..", "conformance", "vectors");
  const srv = await serve({
    "/webtensor/": packageDir(),
    "/test/": join(here, ".."),
    "/vectors/": vectors,
    ...(opts.extraRoots ?? {}),
  });
  const browser = await launch(opts.browserArgs ?? []);
  const logs = [];
  try {
    const page = await browser.newPage();
    page.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
    if (opts.initScript) await page.addInitScript(opts.initScript);
    await page.goto(`${srv.url}${opts.path ?? "/test/browser/page.html"}`);
    await page.waitForFunction(() => window.pageReady === true, null, { timeout: 60_000 });
    return await fn({ page, url: srv.url, logs });
  } finally {
    await browser.close();
    await srv.close();
  }
}

/** Runs every reference vector in the page on device ("webgpu" or "cpu"); resolves to the conformance result. */
export async function browserConformance(page, device, initOptions = {}) {
  return page.evaluate(
    async ({ device, initOptions }) => {
      const { wt, cases } = window;
      await wt.init(initOptions);
      const index = await (await fetch("/vectors/index.json")).json();
      const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
      return cases.conformance(wt, index, {
        sdk: "browser",
        device,
        detail: `webtensor ${wt.version()} (browser, WebAssembly), ${navigator.userAgent.match(/Chrom\S+/)?.[0] ?? "?"}` +
          `, runtime device ${wt.device()}`,
        load: async (file) => new Uint8Array(await (await fetch(`/vectors/${file}`)).arrayBuffer()),
        digest: async (bytes) => hex(await crypto.subtle.digest("SHA-256", bytes)),
      });
    },
    { device, initOptions },
  );
}
