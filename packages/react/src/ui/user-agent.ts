/**
 * A device's name from its User-Agent ("Chrome on macOS"), for the sessions list: the common
 * browsers and systems, in the order that tells them apart (Edge and Opera say "Chrome" too, every
 * Chromium says "Safari"). Not a full parser: anything else is named as well as it can be.
 */
const BROWSERS: [RegExp, string][] = [
  [/\bEdgA?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bCriOS\/|\b(Headless)?Chrom(e|ium)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
  [/^curl\//, 'curl'],
  [/^node\b|\bundici\b/, 'Node.js'],
];

const SYSTEMS: [RegExp, string][] = [
  [/\bWindows\b/, 'Windows'],
  [/\biPhone\b|\biPad\b|\biPod\b/, 'iOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

export function describeAgent(agent: string | null | undefined): string {
  if (!agent) return 'Unknown device';
  const browser = BROWSERS.find(([pattern]) => pattern.test(agent))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(agent))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? (system ? `Browser on ${system}` : agent.split(/[\s/]/)[0] || 'Unknown device');
}

const FACTORS: Record<string, string> = {
  pwd: 'Password',
  email: 'Email',
  sso: 'Single sign-on',
  passkey: 'Passkey',
  totp: 'Authenticator app',
  backup_code: 'Backup code',
  actor: 'Impersonation',
};

/** The factors a session verified (`amr`), in words. */
export function describeFactors(amr: readonly string[]): string {
  return amr.map((factor) => FACTORS[factor] ?? factor).join(' + ');
}
