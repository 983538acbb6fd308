// Launching Debian's Chromium (never a downloaded browser) through
// playwright-core, headless, with WebGPU on and the background networking
// off (this machine's closed network refuses it, noisily).

import { existsSync } from "node:fs";

/** The Chromium to use: $WEBTENSOR_CHROMIUM, else the distribution's. */
export function chromiumPath() {
  const candidates = [process.env.WEBTENSOR_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"];
  return candidates.find((p) => p && existsSync(p)) ?? null;
}

export const CHROMIUM_FLAGS = [
  "--headless=new",
  "--no-sandbox",
  "--enable-unsafe-webgpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
  "--no-first-run",
  "--disable-default-apps",
];

/** Launches Chromium; throws an Error saying how to install it when it is missing. */
export async function launch(extraArgs = []) {
  const path = chromiumPath();
  if (!path) {
    throw new Error("no Chromium found: install Debian's chromium (apt-get install chromium) or set WEBTENSOR_CHROMIUM");
  }
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath: path, args: [...CHROMIUM_FLAGS, ...extraArgs] });
}
