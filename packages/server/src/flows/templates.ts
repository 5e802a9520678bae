export type EmailKind = 'magic_link' | 'email_code' | 'password_reset' | 'sign_up_link' | 'sign_up_code';

export interface EmailContent {
  kind: EmailKind;
  projectName: string;
  logoUrl: string | null;
  /** A one-time code, for code emails. */
  code?: string;
  /** The full link, for link emails. */
  link?: string;
  expiresInMinutes: number;
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

const COPY: Record<EmailKind, { subject: (p: string) => string; lead: string; action: string }> = {
  magic_link: { subject: (p) => `Sign in to ${p}`, lead: 'Use this link to sign in.', action: 'Sign in' },
  sign_up_link: { subject: (p) => `Finish signing up for ${p}`, lead: 'Use this link to create your account.', action: 'Create account' },
  email_code: { subject: (p) => `Your ${p} sign-in code`, lead: 'Enter this code to sign in.', action: '' },
  sign_up_code: { subject: (p) => `Your ${p} sign-up code`, lead: 'Enter this code to create your account.', action: '' },
  password_reset: {
    subject: (p) => `Reset your ${p} password`,
    lead: 'Use this link to choose a new password.',
    action: 'Reset password',
  },
};

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Plain text and HTML for one message. Every interpolated value is escaped in the HTML part. */
export function renderEmail(content: EmailContent): RenderedEmail {
  const copy = COPY[content.kind];
  const expiry = `It expires in ${content.expiresInMinutes} minutes and works once.`;
  const ignore = "If you didn't ask for this, you can ignore this email.";
  const secret = content.code ?? content.link ?? '';

  const text = [copy.lead, '', content.code ? content.code : secret, '', expiry, ignore, '', `— ${content.projectName}`].join('\n');

  const name = escapeHtml(content.projectName);
  const logo = content.logoUrl ? `<img src="${escapeHtml(content.logoUrl)}" alt="${name}" height="48"><br>` : '';
  const body = content.code
    ? `<p style="font-size:28px;letter-spacing:6px;font-weight:bold">${escapeHtml(content.code)}</p>`
    : `<p><a href="${escapeHtml(secret)}">${escapeHtml(copy.action)}</a></p><p style="font-size:12px;color:#666">${escapeHtml(secret)}</p>`;
  const html = `<!doctype html><html><body style="font-family:sans-serif">${logo}<h2>${name}</h2><p>${escapeHtml(copy.lead)}</p>${body}<p>${escapeHtml(expiry)}</p><p style="color:#666">${escapeHtml(ignore)}</p></body></html>`;

  return { subject: copy.subject(content.projectName), text, html };
}
