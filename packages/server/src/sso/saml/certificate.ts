/**
 * The IdP's signing certificate, pasted as PEM or as bare base64 DER (what metadata carries), is
 * normalised to one PEM and checked to be an X.509 certificate, so a typo is a 400 when the
 * connection is saved, not a failed sign-in later.
 */
import { X509Certificate } from 'node:crypto';

export class CertificateError extends Error {
  override name = 'CertificateError';
}

export function normalizeCertificate(input: string): string {
  const trimmed = input.trim();
  let body: string;
  const pem = /^-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----$/.exec(trimmed);
  if (pem) body = pem[1]!;
  else if (trimmed.startsWith('-----')) {
    throw new CertificateError('idpCertificate must be an X.509 certificate (-----BEGIN CERTIFICATE-----), not a key or another PEM block.');
  } else body = trimmed;
  const base64 = body.replace(/\s+/g, '');
  if (base64.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) {
    throw new CertificateError('idpCertificate must be a PEM certificate or its base64 DER body.');
  }
  const der = Buffer.from(base64, 'base64');
  try {
    new X509Certificate(der);
  } catch {
    throw new CertificateError('idpCertificate does not decode to an X.509 certificate; paste the IdP signing certificate.');
  }
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
