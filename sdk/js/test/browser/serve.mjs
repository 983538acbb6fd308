// A static file server for the browser tests, the benchmark and the demo,
// on 127.0.0.1 only: URL prefixes map to folders (the installed package,
// the test files, the reference vectors). Only GET of files under a mapped
// folder; nothing else is reachable. A folder answers with its index.html,
// as any static server does, so the address the demo prints opens its page.

import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, resolve, sep } from "node:path";

const TYPES = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript",
  ".json": "application/json", ".wasm": "application/wasm", ".css": "text/css", ".map": "application/json",
  ".safetensors": "application/octet-stream",
};

function statOrNull(file) {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}

/** Serves roots ({"/prefix/": folder}); resolves to {url, close()} once listening on 127.0.0.1. */
export function serve(roots, port = 0) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    // The longest prefix wins, so "/" can sit beside "/webtensor/" in any order.
    const prefix = Object.keys(roots).filter((p) => path.startsWith(p)).sort((a, b) => b.length - a.length)[0];
    if (req.method !== "GET" || !prefix) {
      res.writeHead(404).end(`not found: ${path}`);
      return;
    }
    const root = resolve(roots[prefix]); // absolute, without a trailing slash
    const file = normalize(join(root, path.slice(prefix.length)));
    if (file !== root && !file.startsWith(root + sep)) {
      res.writeHead(403).end("outside the served folder");
      return;
    }
    let st = statOrNull(file);
    if (st === null) {
      res.writeHead(404).end(`not found: ${path}`);
      return;
    }
    let served = file;
    if (st.isDirectory()) {
      if (!path.endsWith("/")) {
        // The page's relative URLs resolve against the folder only with
        // the slash, so send the browser there first.
        res.writeHead(301, { location: path + "/" }).end();
        return;
      }
      served = join(file, "index.html");
      st = statOrNull(served);
    }
    if (st === null || !st.isFile()) {
      res.writeHead(404).end(`not a file: ${path}${served === file ? "" : " (and no index.html in it)"}`);
      return;
    }
    res.writeHead(200, {
      "content-type": TYPES[extname(served)] ?? "application/octet-stream",
      "content-length": st.size,
      "cache-control": "no-store",
    });
    createReadStream(served).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      resolve({ url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}
