export interface SourceMapV3 {
  version: number;
  sources: string[];
  names?: string[];
  mappings: string;
  [field: string]: unknown;
}
export function thinSourceMap(map: SourceMapV3): SourceMapV3;
