/**
 * The API's message for a field as a sentence with the field's label: the schema's messages are
 * the end of a sentence that starts with the field (`must be at least 4 characters long`); the
 * rest name their subject already (`url points at 10.1.2.3, ...`, `'XYZ' is not ...`) and only
 * start with a capital, so no label is said twice.
 */
export function withLabel(label: string, message: string): string {
  const sentence = PREDICATE.test(message) ? `${label} ${message}` : asSubject(label, message);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/** A message that names its field first (`url points at ...`) names it as the form does (`URL`). */
function asSubject(label: string, message: string): string {
  const named = message.toLowerCase().startsWith(`${label.toLowerCase()} `);
  return named ? `${label}${message.slice(label.length)}` : message.charAt(0).toUpperCase() + message.slice(1);
}

/** How a schema message that lacks its subject starts (schema-messages.ts on the server). */
const PREDICATE = /^(must|should|is|are|has|have|needs?|cannot|may|does)\b/;
