export type EmailKind =
  | 'magic_link'
  | 'email_code'
  | 'password_reset'
  | 'sign_up_link'
  | 'sign_up_code'
  | 'sign_up_verification'
  | 'organization_invitation'
  | 'domain_verification';

export interface EmailContent {
  kind: EmailKind;
  projectName: string;
  logoUrl: string | null;
  /** A one-time code, for code emails. */
  code?: string;
  /** The full link, for link emails. */
  link?: string;
  /** For organization emails: the organization's name. */
  organizationName?: string;
  /** For domain verification: the domain. */
  domain?: string;
  expiresInMinutes: number;
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

type Copy = { subject: (p: string, c: EmailContent) => string; lead: string | ((c: EmailContent) => string); action: string };

const COPY: Record<EmailKind, Copy> = {
  magic_link: { subject: (p) => `Sign in to ${p}`, lead: 'Use this link to sign in.', action: 'Sign in' },
  sign_up_link: { subject: (p) => `Finish signing up for ${p}`, lead: 'Use this link to create your account.', action: 'Create account' },
  email_code: { subject: (p) => `Your ${p} sign-in code`, lead: 'Enter this code to sign in.', action: '' },
  sign_up_code: { subject: (p) => `Your ${p} sign-up code`, lead: 'Enter this code to create your account.', action: '' },
  password_reset: {
    subject: (p) => `Reset your ${p} password`,
    lead: 'Use this link to choose a new password.',
    action: 'Reset password',
  },
  sign_up_verification: {
    subject: (p) => `Your ${p} sign-up code`,
    lead: 'Enter this code to finish creating your account.',
    action: '',
  },
  organization_invitation: {
    subject: (p, c) => `You are invited to join ${c.organizationName} on ${p}`,
    lead: (c) => `You have been invited to join ${c.organizationName}. Use this link to accept the invitation.`,
    action: 'Accept invitation',
  },
  domain_verification: {
    subject: (p, c) => `Verify ${c.domain} for ${c.organizationName} on ${p}`,
    lead: (c) => `Enter this code to verify that ${c.organizationName} uses the domain ${c.domain}.`,
    action: '',
  },
};

/** "10 minutes", "7 days". */
function duration(minutes: number): string {
  if (minutes % 1440 === 0) return minutes === 1440 ? '1 day' : `${minutes / 1440} days`;
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Plain text and HTML for one message. Every interpolated value is escaped in the HTML part. */
export function renderEmail(content: EmailContent): RenderedEmail {
  const copy = COPY[content.kind];
  const lead = typeof copy.lead === 'function' ? copy.lead(content) : copy.lead;
  const expiry = `It expires in ${duration(content.expiresInMinutes)} and works once.`;
  const ignore = "If you didn't ask for this, you can ignore this email.";
  const secret = content.code ?? content.link ?? '';

  const text = [lead, '', content.code ? content.code : secret, '', expiry, ignore, '', `— ${content.projectName}`].join('\n');

  const name = escapeHtml(content.projectName);
  const logo = content.logoUrl ? `<img src="${escapeHtml(content.logoUrl)}" alt="${name}" height="48"><br>` : '';
  const body = content.code
    ? `<p style="font-size:28px;letter-spacing:6px;font-weight:bold">${escapeHtml(content.code)}</p>`
    : `<p><a href="${escapeHtml(secret)}">${escapeHtml(copy.action)}</a></p><p style="font-size:12px;color:#666">${escapeHtml(secret)}</p>`;
  const html = `<!doctype html><html><body style="font-family:sans-serif">${logo}<h2>${name}</h2><p>${escapeHtml(lead)}</p>${body}<p>${escapeHtml(expiry)}</p><p style="color:#666">${escapeHtml(ignore)}</p></body></html>`;

  return { subject: copy.subject(content.projectName, content), text, html };
}
