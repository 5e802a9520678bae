'use server';
import { revalidatePath } from 'next/cache';
import { auth } from '@gatehouse/nextjs/server';
import { notes } from '../notes';

/** A server action that changes data: it checks who is signed in itself, like a route handler. */
export async function saveNote(form: FormData): Promise<void> {
  const { userId } = await auth.protect();
  notes.set(userId, String(form.get('note') ?? '').slice(0, 200));
  revalidatePath('/protected');
}
