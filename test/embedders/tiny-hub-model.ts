/**
 * A tiny sentence-embedding model in the Hugging Face hub's layout, written by the tests: a BERT
 * WordPiece `tokenizer.json`, `config.json`, sentence-transformers `modules.json` and pooling
 * configuration, and an ONNX graph (`onnx/model.onnx`) whose token vectors come from a table.
 *
 * Its "meaning": each word of a topic has the topic's vector, so texts about the same topic embed
 * close together even when they share no word, which keyword search cannot do.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

export const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'] as const;
/** Words grouped by topic: words of one topic share a direction. */
export const TOPICS: Record<string, string[]> = {
  vehicles: ['car', 'automobile', 'truck', 'vehicle', 'drive', 'engine'],
  animals: ['dog', 'puppy', 'cat', 'kitten', 'pet', 'animal'],
  food: ['pizza', 'pasta', 'bread', 'cheese', 'meal', 'dinner'],
  weather: ['rain', 'storm', 'snow', 'cloud', 'wind', 'forecast'],
};
export const FILLER = ['a', 'the', 'my', 'is', 'in', 'fast', 'big', 'old', 'new', 'about', 'for'];
export const DIMENSIONS = 8;

export function vocabulary(): string[] {
  return [...SPECIAL, ...Object.values(TOPICS).flat(), ...FILLER];
}

/** The vector of each token: topic words along their topic's axis, the rest small and spread. */
export function tokenTable(): Float32Array {
  const vocab = vocabulary();
  const table = new Float32Array(vocab.length * DIMENSIONS);
  const topics = Object.keys(TOPICS);
  vocab.forEach((token, id) => {
    const topic = topics.findIndex((t) => TOPICS[t]!.includes(token));
    for (let d = 0; d < DIMENSIONS; d++) table[id * DIMENSIONS + d] = 0.05 * Math.sin(id * 7 + d);
    if (topic >= 0) table[id * DIMENSIONS + topic] = 1;
    if (token === '[CLS]') table[id * DIMENSIONS + 7] = 0.3; // what CLS pooling sees, whatever the text
  });
  return table;
}

function tokenizerJson(): object {
  const vocab = Object.fromEntries(vocabulary().map((token, id) => [token, id]));
  const special = (id: string) => ({ SpecialToken: { id, type_id: 0 } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]')],
      pair: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]'), { Sequence: { id: 'B', type_id: 1 } }, special('[SEP]')],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

/** input_ids (and attention_mask, token_type_ids, unused as BERT's are by this graph) -> Gather. */
export function onnxModel(): Uint8Array {
  const table = tokenTable();
  const V = table.length / DIMENSIONS;
  const type = (elemType: number, dims: Array<string | number>) => ({
    tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } },
  });
  const INT64 = onnx.TensorProto.DataType.INT64;
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 17 }],
    producerName: 'search-tests',
    graph: {
      name: 'tiny-sentence-model',
      node: [{ opType: 'Gather', input: ['table', 'input_ids'], output: ['last_hidden_state'], attribute: [{ name: 'axis', i: 0, type: onnx.AttributeProto.AttributeType.INT }] }],
      initializer: [{ name: 'table', dims: [V, DIMENSIONS], dataType: onnx.TensorProto.DataType.FLOAT, rawData: new Uint8Array(table.buffer) }],
      input: ['input_ids', 'attention_mask', 'token_type_ids'].map((name) => ({ name, type: type(INT64, ['batch', 'tokens']) })),
      output: [{ name: 'last_hidden_state', type: type(onnx.TensorProto.DataType.FLOAT, ['batch', 'tokens', DIMENSIONS]) }],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

/** Every file of the model, by its path in the repository. */
export function hubFiles(pooling: 'mean' | 'cls' = 'mean'): Record<string, string | Uint8Array> {
  return {
    'config.json': JSON.stringify({ model_type: 'bert', hidden_size: DIMENSIONS, max_position_embeddings: 64 }),
    'tokenizer.json': JSON.stringify(tokenizerJson()),
    'tokenizer_config.json': JSON.stringify({ do_lower_case: true, model_max_length: 64, pad_token: '[PAD]', cls_token: '[CLS]', sep_token: '[SEP]', unk_token: '[UNK]' }),
    'modules.json': JSON.stringify([
      { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
      { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
      { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' },
    ]),
    '1_Pooling/config.json': JSON.stringify({ word_embedding_dimension: DIMENSIONS, pooling_mode_cls_token: pooling === 'cls', pooling_mode_mean_tokens: pooling === 'mean' }),
    'onnx/model.onnx': onnxModel(),
  };
}

export function writeHubModel(dir: string, pooling: 'mean' | 'cls' = 'mean'): string {
  for (const [file, content] of Object.entries(hubFiles(pooling))) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  return dir;
}
