// Minimal multipart/form-data reader for the transcription endpoint: field values and file sizes.

export interface FormData {
  fields: Map<string, string>;
  /** Byte length of each file part, by field name. */
  files: Map<string, number>;
}

export function parseMultipart(body: Buffer, contentType: string): FormData | undefined {
  const match = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  if (boundary === undefined) return undefined;
  const delimiter = Buffer.from(`--${boundary}`);
  const form: FormData = { fields: new Map(), files: new Map() };
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const partStart = start + delimiter.length;
    const next = body.indexOf(delimiter, partStart);
    if (next < 0) break;
    readPart(body.subarray(partStart, next), form);
    start = next;
  }
  return form;
}

function readPart(part: Buffer, form: FormData): void {
  const headerEnd = part.indexOf('\r\n\r\n');
  if (headerEnd < 0) return;
  const headers = part.subarray(0, headerEnd).toString('utf8');
  // The part body ends with the CRLF that precedes the next delimiter.
  const content = part.subarray(headerEnd + 4, Math.max(headerEnd + 4, part.length - 2));
  const name = /name="([^"]*)"/i.exec(headers)?.[1];
  if (name === undefined) return;
  if (/filename="/i.test(headers)) form.files.set(name, content.length);
  else form.fields.set(name, content.toString('utf8'));
}
