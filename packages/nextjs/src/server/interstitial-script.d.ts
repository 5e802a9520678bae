/** The interstitial's script: @gatehouse/js and interstitial-client.ts, bundled by scripts/bundle-interstitial.mjs at build. */
export declare const INTERSTITIAL_SCRIPT: string;
