import { createElement, useMemo } from 'react';
import { encodeQr } from './qr-encode.js';

export { encodeQr };

/**
 * A QR code of `value`, drawn here as an SVG (one path, with the 4-module quiet zone): a TOTP
 * secret never leaves the page for a QR service. Scales with its box (`size`, default 176 px).
 */
export function QrCode(props: { value: string; size?: number; label?: string }) {
  const path = useMemo(() => {
    const rows = encodeQr(props.value);
    let d = '';
    rows.forEach((row, r) => row.forEach((dark, c) => dark && (d += `M${c + 4} ${r + 4}h1v1h-1z`)));
    return { d, extent: rows.length + 8 };
  }, [props.value]);
  const size = props.size ?? 176;
  return createElement(
    'svg',
    {
      className: 'gh-qr',
      role: 'img',
      'aria-label': props.label ?? 'QR code',
      width: size,
      height: size,
      viewBox: `0 0 ${path.extent} ${path.extent}`,
      shapeRendering: 'crispEdges',
    },
    createElement('rect', { width: path.extent, height: path.extent, fill: '#fff' }),
    createElement('path', { d: path.d, fill: '#000' }),
  );
}
