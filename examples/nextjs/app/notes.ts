/** The example's "database": one note per user, in memory. */
export const notes = new Map<string, string>();
