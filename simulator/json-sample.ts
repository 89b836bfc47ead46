// Sample values built from a JSON schema, used for tool-call arguments and structured-output replies.
// Rules (tests rely on them): `const` → its value; `enum` → first entry; `anyOf`/`oneOf`/`allOf` → first
// branch; type (first non-"null" of a type list) string → "sample", integer → 1, number → 1.5,
// boolean → true, null → null, array → [sample of `items`] (or [] without `items`), object (or a schema with
// `properties`) → an object with only its `required` properties, in the order of `required`.

import { isRecord, type JsonRecord } from './json-narrow.ts';

const MAX_DEPTH = 8;

export function sampleFromSchema(schema: unknown, depth = 0): unknown {
  if (!isRecord(schema) || depth > MAX_DEPTH) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) return sampleFromSchema(branches[0], depth + 1);
  }
  switch (schemaType(schema)) {
    case 'string': return 'sample';
    case 'integer': return 1;
    case 'number': return 1.5;
    case 'boolean': return true;
    case 'null': return null;
    case 'array': return 'items' in schema ? [sampleFromSchema(schema.items, depth + 1)] : [];
    case 'object': return sampleObject(schema, depth);
    default: return null;
  }
}

function schemaType(schema: JsonRecord): string | undefined {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) {
    const first = type.find((item) => typeof item === 'string' && item !== 'null');
    if (typeof first === 'string') return first;
    return type.includes('null') ? 'null' : undefined;
  }
  return isRecord(schema.properties) ? 'object' : undefined;
}

function sampleObject(schema: JsonRecord, depth: number): JsonRecord {
  const result: JsonRecord = {};
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const name of required) {
    if (typeof name !== 'string') continue;
    result[name] = sampleFromSchema(properties[name], depth + 1);
  }
  return result;
}
