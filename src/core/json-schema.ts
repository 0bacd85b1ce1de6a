/** A JSON Schema document, as produced from a zod schema and sent to providers. */
export type JsonSchema = { [key: string]: unknown };
