"""The ``datagen`` SQL connector: a bounded DataGeneratorSource of random (or sequence)
values as Flink's datagen makes them, with Flink's ``fields.<f>.*`` options."""
import datetime
import decimal
import random
from typing import Dict, List, Optional

from api.common.types import Row
from api.common.watermark_strategy import WatermarkStrategy
from api.datastream.connectors.datagen import DataGeneratorSource
from api.datastream.data_stream import DataStream
from ..ddl import TableDefinition
from ..types import DataType
from .options import SqlConnector, check_options, row_type

__all__ = ['DATAGEN', 'datagen_fields', 'datagen_stream']

_INTEGER_RANGES = {'TINYINT': 8, 'SMALLINT': 16, 'INT': 32, 'BIGINT': 64}
_FLOAT_RANGES = {'FLOAT': (1.4e-45, 3.4028235e38), 'DOUBLE': (4.9e-324, 1.7976931348623157e308)}
_FIELD_OPTIONS = ('kind', 'min', 'max', 'length', 'start', 'end', 'null-rate')
_TIME_ROOTS = ('DATE', 'TIMESTAMP', 'TIMESTAMP_LTZ')


def datagen_stream(env, definition: TableDefinition,
                   parallelism: Optional[int]) -> DataStream:
    """The bounded stream of a datagen table: ``number-of-rows`` rows (or a sequence
    field's ``start``..``end``), random values by default: integers over the type's range,
    strings of ``length`` (100) hex digits, booleans, the current time."""
    options = definition.options
    fields = datagen_fields(definition)
    counts = [int(options['number-of-rows'])] if 'number-of-rows' in options else []
    counts += [f.sequence_length for f in fields if f.sequence_length is not None]
    if not counts:
        raise NotImplementedError(
            f"the datagen table '{definition.name}' is unbounded (no 'number-of-rows' and no "
            "sequence field): tables here hold a bounded stream's rows; set "
            "'number-of-rows'")
    source = DataGeneratorSource(_RandomRows(fields, random.getrandbits(64)), count=min(counts),
                                 type_info=row_type(definition))
    stream = env.from_source(source, WatermarkStrategy.no_watermarks(), 'datagen')
    return stream if parallelism is None else stream.set_parallelism(parallelism)


def datagen_fields(definition: TableDefinition) -> List['_FieldGenerator']:
    """The generators of a datagen table's fields, its options checked."""
    options = definition.options
    columns = definition.physical_columns()
    check_options('datagen', options, ['number-of-rows', 'rows-per-second'] +
                   ['fields.%s.%s' % (n, o) for n, _ in columns for o in _FIELD_OPTIONS])
    return [_FieldGenerator(n, t, {o: options[k] for o in _FIELD_OPTIONS
                                   if (k := 'fields.%s.%s' % (n, o)) in options})
            for n, t in columns]

DATAGEN = SqlConnector(datagen_fields, source=datagen_stream)


class _FieldGenerator:
    """The values of one datagen field: a sequence from ``start`` to ``end``, or random
    values (between ``min`` and ``max``; strings of ``length`` characters); NULL with
    probability ``null-rate``."""

    def __init__(self, name: str, data_type: DataType, options: Dict[str, str]):
        self.name = name
        self.root = data_type._root
        self.precision = data_type._args
        self.null_rate = float(options.get('null-rate', 0))
        self.sequence_start: Optional[int] = None
        self.sequence_length: Optional[int] = None
        if options.get('kind', 'random') == 'sequence':
            if 'start' not in options or 'end' not in options:
                raise ValueError(f"Could not find required property 'fields.{name}.start' "
                                 f"and 'fields.{name}.end' for sequence generator.")
            self.sequence_start = int(options['start'])
            self.sequence_length = int(options['end']) - self.sequence_start + 1
        elif self.root in _INTEGER_RANGES:
            bits = _INTEGER_RANGES[self.root]
            self.low = int(options.get('min', -(1 << bits - 1)))
            self.high = int(options.get('max', (1 << bits - 1) - 1))
        elif self.root in _FLOAT_RANGES or self.root == 'DECIMAL':
            low, high = _FLOAT_RANGES.get(self.root, (0.0, 10.0 ** (
                self.precision[0] - self.precision[1]) - 1))
            self.low = float(options.get('min', low))
            self.high = float(options.get('max', high))
        elif self.root in ('STRING', 'VARCHAR', 'CHAR', 'BYTES', 'VARBINARY', 'BINARY'):
            longest = data_type._parameters()[0] if data_type._args else 100
            self.length = min(int(options.get('length', 100)), longest)
        elif self.root not in ('BOOLEAN',) + _TIME_ROOTS:
            raise NotImplementedError(f"datagen: the field '{name}' of type {data_type} "
                                      "cannot be generated here")

    def value(self, index: int, rng: random.Random):
        if self.sequence_start is not None:
            return self.sequence_start + index
        if self.null_rate and rng.random() < self.null_rate:
            return None
        root = self.root
        if root in _INTEGER_RANGES:
            return rng.randint(self.low, self.high)
        if root in _FLOAT_RANGES:
            return rng.uniform(self.low, self.high)
        if root == 'DECIMAL':
            return decimal.Decimal(rng.uniform(self.low, self.high)).quantize(
                decimal.Decimal(1).scaleb(-self.precision[1]))
        if root == 'BOOLEAN':
            return rng.random() < 0.5
        if root in ('BYTES', 'VARBINARY', 'BINARY'):
            return bytes(rng.getrandbits(8) for _ in range(self.length))
        if root in _TIME_ROOTS:
            now = datetime.datetime.now()
            return now.date() if root == 'DATE' else now
        return '%0*x' % (self.length, rng.getrandbits(4 * self.length))


class _RandomRows:
    """Row ``i`` of a datagen table (its random values drawn from a generator seeded by
    the table's seed and ``i``, so a row is the same wherever it is made)."""

    def __init__(self, fields: List[_FieldGenerator], seed: int):
        self.fields = fields
        self.seed = seed

    def __call__(self, index: int) -> Row:
        rng = random.Random(self.seed * 1_000_003 + index)
        row = Row(*[f.value(index, rng) for f in self.fields])
        row.set_field_names([f.name for f in self.fields])
        return row
