/**
 * RFC 4180 CSV, as Clerk's export and PostgreSQL's `\copy … csv header` write it: fields separated
 * by commas, quoted with double quotes when they hold a comma, a quote (doubled) or a line break.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte-order mark is not part of the first name
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (quoted) throw new Error('The CSV ends inside a quoted field; the file is cut short or not CSV.');
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => !(r.length === 1 && r[0] === ''));
}

/** The rows as objects keyed by the header row's names (lowercased, trimmed). */
export function csvRecords(text: string): { header: string[]; records: Record<string, string>[] } {
  const [head, ...rows] = parseCsv(text);
  if (!head) return { header: [], records: [] };
  const header = head.map((name) => name.trim().toLowerCase());
  return {
    header,
    records: rows.map((cells, line) => {
      if (cells.length !== header.length) {
        throw new Error(`Row ${line + 1} has ${cells.length} fields but the header has ${header.length}; the file is not valid CSV.`);
      }
      return Object.fromEntries(header.map((name, i) => [name, cells[i]!]));
    }),
  };
}
