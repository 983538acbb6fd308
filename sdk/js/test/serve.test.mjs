// The static server of the browser tests and of `make serve-demo`: the
// address the demo prints (the root, no index.html) must answer with the
// page, not "not a file: /".

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "./browser/serve.mjs";

const here = dirname(fileURLToPath(import.meta.url));
// make js-test copies the example beside the tests; in the repo it is a level up.
const demo = [join(here, "examples", "browser"), join(here, "..", "examples", "browser")].find((d) => existsSync(d));

test("a folder answers with its index.html; without the slash it redirects to it", async (t) => {
  const root = mkdtempSync(join(tmpdir(), "wt-serve-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, "index.html"), "<!doctype html><title>root page</title>");
  mkdirSync(join(root, "sub"));
  writeFileSync(join(root, "sub", "index.html"), "<title>sub page</title>");
  mkdirSync(join(root, "empty"));
  const srv = await serve({ "/": root, "/slash/": `${root}/` });
  t.after(() => srv.close());
  assert.match(await (await fetch(`${srv.url}/slash/`)).text(), /root page/, "a folder given with a trailing slash");

  const top = await fetch(`${srv.url}/`);
  assert.equal(top.status, 200);
  assert.equal(top.headers.get("content-type"), "text/html; charset=utf-8");
  assert.match(await top.text(), /root page/);

  const sub = await fetch(`${srv.url}/sub`, { redirect: "manual" });
  assert.equal(sub.status, 301);
  assert.equal(sub.headers.get("location"), "/sub/");
  await sub.arrayBuffer();
  assert.match(await (await fetch(`${srv.url}/sub`)).text(), /sub page/);

  const empty = await fetch(`${srv.url}/empty/`);
  assert.equal(empty.status, 404);
  assert.equal(await empty.text(), "not a file: /empty/ (and no index.html in it)");
  const missing = await fetch(`${srv.url}/nope.html`);
  assert.equal(missing.status, 404);
  assert.equal(await missing.text(), "not found: /nope.html");
  const outside = await fetch(`${srv.url}/%2e%2e/%2e%2e/etc/passwd`);
  assert.notEqual(outside.status, 200);
  await outside.arrayBuffer();
});

test("the demo's folder is served at the address make serve-demo prints", async (t) => {
  assert.ok(demo, "the browser example is beside the tests or a level up");
  const srv = await serve({ "/": demo });
  t.after(() => srv.close());
  const res = await fetch(`${srv.url}/`);
  assert.equal(res.status, 200);
  assert.match(await res.text(), /<html/i);
});
