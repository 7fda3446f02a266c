/**
 * A document's JSON as the SQLite adapter stores it: without its `_id`, which the row's primary
 * key already holds (each stored document repeated it, 20 to 100 bytes, in every row of every
 * read model). Reading puts it back, first. Documents stored before, with their `_id` inside,
 * read the same.
 */

/** The document's JSON without its top-level `_id`. */
export const storedText = (document: { _id: string }): string => {
  const text = JSON.stringify(document);
  const id = JSON.stringify(document._id);
  // Documents are built with `_id` first, or given it last (`{ ...replacement, _id }`): cut the text there.
  const head = `{"_id":${id}`;
  if (text.startsWith(head)) return text.length === head.length + 1 ? '{}' : `{${text.slice(head.length + 1)}`;
  const tail = `,"_id":${id}}`;
  if (text.endsWith(tail)) return `${text.slice(0, -tail.length)}}`;
  const { _id: _kept, ...fields } = document;
  return JSON.stringify(fields);
};

/** The stored JSON of the row `id` as its document, `_id` first. */
export const parseStored = (id: string, text: string): unknown =>
  JSON.parse(text === '{}' ? `{"_id":${JSON.stringify(id)}}` : `{"_id":${JSON.stringify(id)},${text.slice(1)}`);
