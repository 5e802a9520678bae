/**
 * Strict XML parsing for SAML: a document that does not parse, or that carries a DTD, is refused
 * with a message naming the problem. xmldom alone is forgiving (it reports errors and carries on),
 * and a DTD has no place in SAML: entities are how billion-laughs and XXE payloads arrive.
 */
import { DOMParser } from '@xmldom/xmldom';

export const NS = {
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
} as const;

export class XmlParseError extends Error {
  override name = 'XmlParseError';
}

export function parseXml(text: string, what: string): Document {
  if (/<!DOCTYPE/i.test(text)) throw new XmlParseError(`${what} contains a DOCTYPE, which SAML does not allow.`);
  const problems: string[] = [];
  const parser = new DOMParser({
    errorHandler: {
      // xmldom reports a mismatched end tag or an unquoted attribute as a mere warning.
      warning: (message: string) => problems.push(message),
      error: (message: string) => problems.push(message),
      fatalError: (message: string) => problems.push(message),
    },
  });
  let doc: Document | undefined;
  try {
    doc = parser.parseFromString(text, 'text/xml') as unknown as Document;
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
  }
  if (problems.length > 0 || !doc?.documentElement) {
    const first = (problems[0] ?? 'no root element').replace(/\[xmldom \w+\]|@#\[.*$/gs, '').replace(/\s+/g, ' ').trim().slice(0, 200);
    throw new XmlParseError(`${what} is not well-formed XML (${first}).`);
  }
  return doc;
}

/** Element children of `parent` with that namespace and local name (direct children only). */
export function children(parent: Element, ns: string, localName: string): Element[] {
  const out: Element[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1) {
      const el = node as Element;
      if (el.namespaceURI === ns && el.localName === localName) out.push(el);
    }
  }
  return out;
}

export function child(parent: Element, ns: string, localName: string): Element | null {
  return children(parent, ns, localName)[0] ?? null;
}

/** Text of an element: every descendant text node joined (comments are not text), trimmed. */
export function text(el: Element | null): string {
  return (el?.textContent ?? '').trim();
}

export function is(el: Element | null | undefined, ns: string, localName: string): el is Element {
  return !!el && el.namespaceURI === ns && el.localName === localName;
}
