import type { Core } from './core.js';
import { errorFromResponse, networkError } from './errors.js';
import { imageFacts } from './image.js';
import type { UploadPurpose } from './types.js';

export type ImageInput = Blob | ArrayBuffer | Uint8Array;

/** Uploads an image for `purpose` and answers its public URL. */
export type Upload = (purpose: UploadPurpose, file: ImageInput) => Promise<string>;

export function createUpload(core: Core): Upload {
  /** Ticket, PUT, done: the server checks the bytes against what the ticket says. */
  return async function upload(purpose, file) {
    const bytes = file instanceof Uint8Array ? file : new Uint8Array(file instanceof ArrayBuffer ? file : await file.arrayBuffer());
    const facts = await imageFacts(bytes);
    const ticket = await core.authed('POST /v1/me/assets/upload-url', { body: { purpose, ...facts } });
    if (!ticket.alreadyExists && ticket.uploadUrl) {
      let response: Response;
      try {
        response = await core.fetch(ticket.uploadUrl, {
          method: 'PUT',
          headers: ticket.uploadHeaders ?? {},
          body: bytes as Uint8Array<ArrayBuffer>,
        });
      } catch (cause) {
        throw networkError(cause);
      }
      if (!response.ok) throw await errorFromResponse(response);
    }
    return ticket.publicUrl;
  };
}
