import { emailKey } from './email.js';

/**
 * What `GET /v1/users?query=` searches: the email (as its key), first name, last name and username,
 * each folded the way email keys are (Unicode NFC, lowercase), one per line. Folded here, not by
 * SQL, so SQLite and PostgreSQL compare the same characters; a query matches a user whose text
 * contains the folded query.
 */
export function searchText(user: {
  email_key: string;
  first_name: string | null;
  last_name: string | null;
  username: string | null;
}): string {
  return [fold(user.email_key), fold(user.first_name), fold(user.last_name), fold(user.username)].join(SEPARATOR);
}

/** The folded query; undefined when it cannot match any one field (it holds the separator). */
export function searchNeedle(query: string): string | undefined {
  const needle = emailKey(query);
  return needle.includes(SEPARATOR) ? undefined : needle;
}

// A line break separates the fields, so a needle never matches across two of them; one inside a
// field (none of the four should hold one) is searched as a space.
const SEPARATOR = '\n';

function fold(text: string | null): string {
  return text === null ? '' : emailKey(text).replaceAll(SEPARATOR, ' ');
}

/** The shortest needle a trigram index can narrow (shorter ones are scanned in id order). */
export const TRIGRAM = 3;
