// A zip archive of a folder, written in Node for the diffusion tests and
// the demo server: a saved pipeline reaches the browser (and
// wt.diffuse.Pipeline.load(bytes)) as one archive, built when it is needed
// from the committed folder rather than committed twice. Deflated entries,
// slash paths, sorted; the format is PKWARE's APPNOTE (local headers, the
// central directory, its end record), without zip64 (archives stay small).

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { deflateRawSync } from "node:zlib";

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The files under dir as [slash path, absolute path], sorted. */
function walk(dir, prefix = "") {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name), `${prefix}${e.name}/`) : [[prefix + e.name, join(dir, e.name)]]));
}

/** A zip archive of entries ([name, bytes] pairs, names with / separators), deflated. */
export function zipEntries(entries) {
  const locals = [];
  const central = [];
  let offset = 0;
  for (const [name, data] of entries) {
    const nameBytes = Buffer.from(name, "utf8");
    const body = deflateRawSync(data);
    const crc = crc32(data);
    // Version 20, flag 0x800 (UTF-8 names), method 8 (deflate), time and date 0 (1980).
    const head = Buffer.alloc(30);
    head.writeUInt32LE(0x04034b50, 0);
    head.writeUInt16LE(20, 4);
    head.writeUInt16LE(0x800, 6);
    head.writeUInt16LE(8, 8);
    head.writeUInt32LE(crc, 14);
    head.writeUInt32LE(body.length, 18);
    head.writeUInt32LE(data.length, 22);
    head.writeUInt16LE(nameBytes.length, 26);
    locals.push(head, nameBytes, body);
    const dirEntry = Buffer.alloc(46);
    dirEntry.writeUInt32LE(0x02014b50, 0);
    dirEntry.writeUInt16LE(20, 4);
    dirEntry.writeUInt16LE(20, 6);
    dirEntry.writeUInt16LE(0x800, 8);
    dirEntry.writeUInt16LE(8, 10);
    dirEntry.writeUInt32LE(crc, 16);
    dirEntry.writeUInt32LE(body.length, 20);
    dirEntry.writeUInt32LE(data.length, 24);
    dirEntry.writeUInt16LE(nameBytes.length, 28);
    dirEntry.writeUInt32LE(offset, 42);
    central.push(dirEntry, nameBytes);
    offset += head.length + nameBytes.length + body.length;
  }
  const dirBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dirBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...locals, dirBytes, end]));
}

/** A zip archive of dir's files, each under prefix (say "pipe/", as `zip -r` nests a folder). */
export function zipFolder(dir, prefix = "") {
  return zipEntries(walk(dir).map(([name, file]) => [prefix + name, readFileSync(file)]));
}
