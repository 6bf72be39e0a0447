"""The ``kafka`` and ``upsert-kafka`` SQL connectors, on KafkaSource and KafkaSink with
Flink's options: 'topic', 'properties.*' (bootstrap servers, group id, any client
property), 'format' (or 'value.format') and 'key.format' / 'key.fields' /
'value.fields-include', 'scan.startup.mode' and 'scan.bounded.mode' (with their
offsets or timestamps), 'sink.delivery-guarantee' and 'sink.transactional-id-prefix'.
A ``kafka`` table reads every topic matching 'topic-pattern' (new ones found every
'scan.topic-partition-discovery.interval') and its records' metadata into its metadata
columns (``ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'``, ``partition INT METADATA
VIRTUAL``, ...: Flink's keys ``topic``, ``partition``, ``offset``, ``timestamp``,
``timestamp-type``, ``headers``, ``leader-epoch``).

An ``upsert-kafka`` table's primary key is each message's key: its sink writes an insert or
an update (``+I``, ``+U``) as the row's value, a delete (``-D``) as a tombstone (no value)
and drops ``-U`` rows; its source reads messages as upserts and deletes of their keys."""
import copy
import re
from typing import Callable, Dict, List, Optional, Tuple

from api.common.serialization import DeserializationSchema, SerializationSchema
from api.common.typeinfo import Types
from api.common.types import Row, RowKind
from api.common.watermark_strategy import WatermarkStrategy
from api.datastream.connectors.base import DeliveryGuarantee
from api.datastream.connectors.kafka import (KafkaOffsetResetStrategy, KafkaOffsetsInitializer,
                                             KafkaRecordSerializationSchema, KafkaSink,
                                             KafkaSource, KafkaTopicPartition)
from api.datastream.data_stream import DataStream
from api.datastream.functions import KeyedProcessFunction
from api.datastream.state import ValueStateDescriptor
from engine.io.kafka.client import ProducerRecord
from engine.io.kafka.source import KafkaRecord
from ..changelog import Calc
from ..ddl import TableDefinition
from ..row_expressions import _local_time
from ..types import type_info_of
from .formats import RowFormat, format_option_keys
from .options import SqlConnector, check_options, duration, row_type

__all__ = ['KAFKA', 'UPSERT_KAFKA']

_SCAN = ('scan.startup.mode', 'scan.startup.specific-offsets', 'scan.startup.timestamp-millis',
         'scan.bounded.mode', 'scan.bounded.specific-offsets', 'scan.bounded.timestamp-millis')
_SINK = ('sink.delivery-guarantee', 'sink.transactional-id-prefix', 'sink.parallelism')


class _Layout:
    """Where a Kafka table's columns are: the key's columns and format (None: no key) and
    the value's; ``upsert``: a delete is a tombstone."""

    def __init__(self, definition: TableDefinition, upsert: bool):
        options = definition.options
        self.name = 'upsert-kafka' if upsert else 'kafka'
        columns = definition.physical_columns()
        names = [n for n, _ in columns]
        if upsert:
            key = definition.schema._primary_key
            if key is None:
                raise ValueError("'upsert-kafka' tables require to define a PRIMARY KEY "
                                 "constraint. The PRIMARY KEY specifies which columns should "
                                 "be read from or write to the Kafka message key.")
            key_fields = key[1]
        else:
            key_fields = [f.strip() for f in options['key.fields'].split(';')] \
                if 'key.fields' in options else []
        unknown = [f for f in key_fields if f not in names]
        if unknown:
            raise ValueError(f"Could not find the field '{unknown[0]}' in the table schema "
                             f"for usage in the key format. A key field must be a regular, "
                             f"physical column. The following columns can be selected in the "
                             f"'key.fields' option: {names}")
        key_format = options.get('key.format')
        if bool(key_format) != bool(key_fields):
            raise ValueError("A key format 'key.format' requires the declaration of one or "
                             "more of key fields using 'key.fields'." if key_format else
                             "The 'key.fields' option requires a 'key.format'.")
        include = options.get('value.fields-include', 'ALL').upper()
        if include not in ('ALL', 'EXCEPT_KEY'):
            raise ValueError(f"Could not parse value '{include}' for key "
                             "'value.fields-include': it is ALL or EXCEPT_KEY")
        self.key = [names.index(f) for f in key_fields]
        self.value = [i for i in range(len(columns))
                      if include == 'ALL' or i not in self.key]
        self.key_format = key_format and RowFormat(
            key_format, [columns[i] for i in self.key], options, 'key.')
        value_format = options.get('value.format') or options['format']
        self.value_format = RowFormat(value_format, [columns[i] for i in self.value], options,
                                      'value.' if 'value.format' in options else '')
        self.size = len(columns)
        self.upsert = upsert


def _checked(definition: TableDefinition, upsert: bool) -> _Layout:
    options = definition.options
    formats = [('format', ''), ('value.format', 'value.'), ('key.format', 'key.')]
    check_options('upsert-kafka' if upsert else 'kafka', options,
                  ['topic', 'properties.*', 'key.fields', 'value.fields-include'] +
                  ([] if upsert else list(_PATTERN)) + [k for k, _ in formats] + list(_SINK) +
                  [k for k in _SCAN if not upsert or k.startswith('scan.bounded')] +
                  [o for k, prefix in formats if k in options
                   for o in format_option_keys(options[k], prefix)],
                  required=(['topic'] if upsert else []) + ['properties.bootstrap.servers'] +
                  (['key.format', 'value.format'] if upsert else []))
    if not upsert:
        _check_topics(definition)
    if 'format' not in options and 'value.format' not in options:
        raise ValueError("One or more required options are missing for 'kafka'. Missing "
                         "required options are: format")
    guarantee = options.get('sink.delivery-guarantee', 'at-least-once')
    if guarantee not in ('exactly-once', 'at-least-once', 'none'):
        raise ValueError(f"Could not parse value '{guarantee}' for key "
                         "'sink.delivery-guarantee': it is exactly-once, at-least-once or none")
    if guarantee == 'exactly-once' and 'sink.transactional-id-prefix' not in options:
        raise ValueError("sink.transactional-id-prefix must be specified when using "
                         "DeliveryGuarantee.EXACTLY_ONCE.")
    _offsets(options, 'startup', options.get('topic'))
    _offsets(options, 'bounded', options.get('topic'))
    return _Layout(definition, upsert)


def kafka_source(env, definition: TableDefinition, parallelism: Optional[int],
                 upsert: bool = False) -> DataStream:
    """The stream of the rows of the table's topic, from 'scan.startup.mode' (in
    upsert-kafka: from the earliest offsets, Rows of kind INSERT, or DELETE for a
    tombstone, of the key's columns only), unbounded unless 'scan.bounded.mode' ends
    it."""
    options = definition.options
    layout = _checked(definition, upsert)
    rows = _RecordRows(layout, row_type(definition))
    if definition.metadata_columns():
        rows = _MetadataRows(layout, definition)
    builder = _subscribed(KafkaSource.builder(), options) \
        .set_value_only_deserializer(rows) \
        .set_properties({k[len('properties.'):]: v for k, v in options.items()
                         if k.startswith('properties.')}) \
        .set_starting_offsets(KafkaOffsetsInitializer.earliest() if upsert else
                              _offsets(options, 'startup', options.get('topic')))
    stopping = _offsets(options, 'bounded', options.get('topic'))
    if stopping is not None:
        builder.set_bounded(stopping)
    stream = env.from_source(builder.build(), WatermarkStrategy.no_watermarks(),
                             definition.name).uid(definition.name)
    return stream if parallelism is None else stream.set_parallelism(parallelism)


def kafka_sink(definition: TableDefinition,
               parallelism: Optional[int] = None) -> Callable[[DataStream], object]:
    """What writes a stream of the table's rows to its topic (upsert-kafka: keyed by the
    primary key, deletes as tombstones)."""
    options = definition.options
    layout = _checked(definition, definition.options['connector'] == 'upsert-kafka')
    _check_sink_topic(definition)
    records = KafkaRecordSerializationSchema.builder().set_topic(options['topic']) \
        .set_value_serialization_schema(_Projected(layout.value_format, layout.value,
                                                   layout.upsert))
    if layout.key_format:
        records.set_key_serialization_schema(_Projected(layout.key_format, layout.key))
    guarantee = options.get('sink.delivery-guarantee', 'at-least-once')
    records = records.build()
    if any(not c.is_virtual for c in definition.metadata_columns()):
        records = _MetadataRecords(records, definition)
    builder = KafkaSink.builder().set_record_serializer(records) \
        .set_delivery_guarantee(DeliveryGuarantee[guarantee.upper().replace('-', '_')])
    for key, value in options.items():
        if key.startswith('properties.'):
            builder.set_property(key[len('properties.'):], value)
    if 'sink.transactional-id-prefix' in options:
        builder.set_transactional_id_prefix(options['sink.transactional-id-prefix'])
    sink = builder.build()
    parallelism = int(options.get('sink.parallelism', parallelism or 0)) or None

    def write(stream: DataStream):
        if layout.upsert:
            stream = stream.filter(_not_update_before)
        written = stream.sink_to(sink).uid(definition.name + '_sink')
        return written if parallelism is None else written.set_parallelism(parallelism)
    return write


def _not_update_before(row) -> bool:
    return row.get_row_kind() != RowKind.UPDATE_BEFORE


def _offsets(options: Dict[str, str], which: str,
             topic: str) -> Optional[KafkaOffsetsInitializer]:
    """The offsets of 'scan.startup.mode' (``which`` 'startup') or 'scan.bounded.mode'
    ('bounded'; None: unbounded)."""
    default = 'group-offsets' if which == 'startup' else 'unbounded'
    mode = options.get(f'scan.{which}.mode', default)
    if mode == 'earliest-offset' and which == 'startup':
        return KafkaOffsetsInitializer.earliest()
    if mode == 'latest-offset':
        return KafkaOffsetsInitializer.latest()
    if mode == 'group-offsets':
        reset = options.get('properties.auto.offset.reset', 'none').upper()
        return KafkaOffsetsInitializer.committed_offsets(KafkaOffsetResetStrategy[reset])
    if mode == 'timestamp':
        key = f'scan.{which}.timestamp-millis'
        if key not in options:
            raise ValueError(f"'{key}' is required in 'timestamp' {which} mode but missing.")
        return KafkaOffsetsInitializer.timestamp(int(options[key]))
    if mode == 'specific-offsets':
        key = f'scan.{which}.specific-offsets'
        if key not in options:
            raise ValueError(f"'{key}' is required in 'specific-offsets' {which} mode but "
                             "missing.")
        return KafkaOffsetsInitializer.offsets(_specific_offsets(options[key], topic))
    if mode == 'unbounded' and which == 'bounded':
        return None
    raise ValueError(f"Could not parse value '{mode}' for key 'scan.{which}.mode'")


def _specific_offsets(text: str, topic: str) -> Dict[KafkaTopicPartition, int]:
    """'partition:0,offset:42;partition:1,offset:300' of ``topic``."""
    offsets = {}
    for item in filter(None, (i.strip() for i in text.split(';'))):
        fields = dict(f.strip().split(':', 1) for f in item.split(','))
        if set(fields) != {'partition', 'offset'}:
            raise ValueError(f"Invalid properties '{text}': specific offsets are "
                             "'partition:0,offset:42;partition:1,offset:300'")
        offsets[KafkaTopicPartition(topic, int(fields['partition']))] = int(fields['offset'])
    return offsets


class _Projected(SerializationSchema):
    """The bytes of the columns at ``indices`` of a row in ``row_format`` (None, a
    tombstone, for a deleted row when ``tombstones``)."""

    def __init__(self, row_format: RowFormat, indices: List[int], tombstones: bool = False):
        self.row_format = row_format
        self.indices = indices
        self.tombstones = tombstones

    def _serialize(self, value) -> Optional[bytes]:
        if self.tombstones and value.get_row_kind() == RowKind.DELETE:
            return None
        return self.row_format.serialize([value[i] for i in self.indices])


class _RecordRows(DeserializationSchema):
    """The table row of a Kafka record's key and value (None: an unreadable record skipped
    by 'ignore-parse-errors'); a tombstone of upsert-kafka is a DELETE row of the key."""

    def __init__(self, layout: _Layout, rows):
        self.layout = layout
        self.rows = rows

    def _produced_type(self):
        return self.rows

    def _deserialize(self, message: bytes):
        return self._deserialize_record(None, message)

    def _deserialize_record(self, key: Optional[bytes], value: Optional[bytes]):
        layout = self.layout
        values = [None] * layout.size
        if layout.key_format:
            key_row = None if key is None else layout.key_format.deserialize(key)
            if key_row is None:
                return None
            for i, v in zip(layout.key, key_row):
                values[i] = v
        if value is None:
            if not layout.upsert:
                return None
            kind = RowKind.DELETE
        else:
            value_row = layout.value_format.deserialize(value)
            if value_row is None:
                return None
            for i, v in zip(layout.value, value_row):
                values[i] = v
            kind = RowKind.INSERT
        row = Row(*values)
        row.set_field_names(self.rows.get_field_names())
        row.set_row_kind(kind)
        return row


class UpsertChangelog:
    """The changelog of an upsert-kafka table (Flink's ChangelogNormalize): per key, the
    first value ``+I``, a changed value ``-U`` (the old row) and ``+U``, a tombstone ``-D``
    (the old row); a repeated value or a tombstone of an absent key nothing. A query's
    filter and the columns it reads are taken in, as Flink's planner pushes them: a value
    failing the ``condition`` deletes its key, and a value is repeated when the
    ``compared`` columns (the key's and those read) are."""
    updating = True  # its changelog updates and deletes rows

    def __init__(self, data_stream: DataStream, definition: TableDefinition):
        self.data_stream = data_stream
        self.key = _Layout(definition, True).key
        self.names = [n for n, _ in definition.physical_columns()]
        self.rows = row_type(definition)
        self.unique_key = tuple(self.names[i] for i in self.key)  # its rows' unique key
        self.compared = tuple(range(len(self.names)))
        self.condition = None

    def taking(self, calc: Calc) -> Tuple['UpsertChangelog', Calc]:
        """(this changelog with ``calc``'s filter and columns taken in, its projection)."""
        taken, condition = copy.copy(self), self.condition  # (of a Calc taken before)
        if calc.condition is not None:
            condition = calc.condition if condition is None else condition.and_(calc.condition)
        taken.condition = condition
        taken.compared = tuple(sorted(set(self.key) | Calc(condition, calc.items).referenced()))
        return taken, Calc(None, calc.items)

    def node(self) -> str:
        """The plan node, as Flink names it in its messages."""
        return 'ChangelogNormalize(key=[%s])' % ', '.join(self.names[i] for i in self.key)

    def changelog_stream(self, rows, uid: str) -> DataStream:
        """The DataStream of the changelog: Rows of ``rows`` with their row kinds."""
        key_types = [self.rows.get_field_types()[i] for i in self.key]
        return self.data_stream.key_by(
            _KeyOf(self.key), key_types[0] if len(key_types) == 1 else Types.TUPLE(key_types)) \
            .process(_Normalize(self.rows, self.compared, self.condition), rows).uid(uid)


class _KeyOf:
    def __init__(self, key: List[int]):
        self.key = key

    def __call__(self, row):
        values = tuple(row[i] for i in self.key)
        return values[0] if len(values) == 1 else values


class _Normalize(KeyedProcessFunction):
    """Upserts and deletes of a key as its changelog, the key's last row in keyed state."""

    def __init__(self, rows, compared: Tuple[int, ...], condition):
        self.rows = rows
        self.compared = compared
        self.condition = condition

    def open(self, runtime_context):
        self.last = runtime_context.get_state(ValueStateDescriptor('last', self.rows))

    def process_element(self, value, ctx):
        last = self.last.value()
        if value.get_row_kind() == RowKind.DELETE or (
                self.condition is not None and not self.condition.holds(tuple(value))):
            if last is not None:
                self.last.clear()
                yield _of_kind(last, RowKind.DELETE)
            return
        row = _of_kind(value, RowKind.INSERT)
        if last is None:
            yield row
        elif [last[i] for i in self.compared] != [row[i] for i in self.compared]:
            yield _of_kind(last, RowKind.UPDATE_BEFORE)
            yield _of_kind(row, RowKind.UPDATE_AFTER)
        else:
            return
        self.last.update(row)


def _of_kind(row, kind: RowKind) -> Row:
    copy = Row(*row)
    if hasattr(row, '_fields'):
        copy.set_field_names(row._fields)
    copy.set_row_kind(kind)
    return copy


# --- topic patterns and metadata columns (kafka) --------------------------------------------
_PATTERN = ('topic-pattern', 'scan.topic-partition-discovery.interval')
# Flink's metadata keys of a Kafka record (read): their types, and the types of their
# columns here
_STRINGS = ('STRING', 'VARCHAR', 'CHAR')
_METADATA = {'topic': ('STRING NOT NULL', _STRINGS),
             'partition': ('INT NOT NULL', ('INT', 'BIGINT')),
             'headers': ('MAP<STRING, BYTES> NOT NULL', ('MAP',)),
             'leader-epoch': ('INT NULL', ('INT', 'BIGINT')),
             'offset': ('BIGINT NOT NULL', ('BIGINT',)),
             'timestamp': ('TIMESTAMP_LTZ(3) NOT NULL', ('TIMESTAMP_LTZ', 'TIMESTAMP')),
             'timestamp-type': ('STRING NOT NULL', _STRINGS)}
_WRITTEN = ('headers', 'timestamp')  # the keys a sink writes


def _check_topics(definition: TableDefinition) -> None:
    """'topic' or 'topic-pattern' (a Java regular expression of whole topic names), its
    discovery interval, and the types of the metadata columns."""
    options = definition.options
    if ('topic' in options) == ('topic-pattern' in options):
        raise ValueError("Option 'topic' and 'topic-pattern' shouldn't be set together."
                         if 'topic' in options else
                         "Either 'topic' or 'topic-pattern' must be set.")
    if 'topic-pattern' in options:
        try:
            re.compile(options['topic-pattern'])
        except re.error as e:
            raise ValueError(f"Invalid 'topic-pattern' {options['topic-pattern']!r}: {e}") \
                from None
        if options.get('scan.startup.mode') == 'specific-offsets' or \
                options.get('scan.bounded.mode') == 'specific-offsets':
            raise ValueError("Currently Kafka source only supports specific offset for "
                             "single topic.")
    duration(options, 'scan.topic-partition-discovery.interval', '5 min')
    for column in definition.metadata_columns():
        key = column.metadata_key or column.name
        flink_type, roots = _METADATA[key]
        if column.data_type._root not in roots:
            raise ValueError(f"Invalid data type for the metadata column '{column.name}': "
                             f"Kafka's '{key}' is {flink_type}, not {column.data_type}")


def _subscribed(builder, options: Dict[str, str]):
    """``builder`` subscribed to the table's 'topic' (``a;b``: several) or 'topic-pattern',
    discovering new topics and partitions every 'scan.topic-partition-discovery.interval'
    (0: never)."""
    builder.set_property('partition.discovery.interval.ms', str(duration(
        options, 'scan.topic-partition-discovery.interval', '5 min')))
    if 'topic-pattern' in options:
        return builder.set_topic_pattern(options['topic-pattern'])
    return builder.set_topics(*options['topic'].split(';'))


def _check_sink_topic(definition: TableDefinition) -> None:
    """A sink writes one 'topic', and of its metadata 'timestamp' and 'headers' (when the
    insert is planned)."""
    if 'topic' not in definition.options:
        raise ValueError("Flink Kafka sink currently only supports single topic, but got "
                         "topic-pattern")
    for column in definition.metadata_columns():
        key = column.metadata_key or column.name
        if not column.is_virtual and key not in _WRITTEN:
            raise ValueError(
                f"Invalid metadata key '{key}' in column '{column.name}' of table "
                f"'default_catalog.default_database.{definition.name}'. The 'kafka' connector "
                f"supports the following metadata keys for writing: {', '.join(_WRITTEN)}")


class _MetadataRecords(KafkaRecordSerializationSchema):
    """The Kafka records of ``records`` of a table's rows (its persisted columns) whose
    metadata columns give each record's timestamp and headers."""

    def __init__(self, records: KafkaRecordSerializationSchema, definition: TableDefinition):
        super().__init__(records._topic, records._topic_selector,
                         records._key_serialization_schema, records._value_serialization_schema)
        names = [n for n, _ in definition.persisted_columns()]
        self.physical = [names.index(n) for n, _ in definition.physical_columns()]
        written = {c.metadata_key or c.name: names.index(c.name)
                   for c in definition.metadata_columns() if not c.is_virtual}
        self.timestamp = written.get('timestamp')
        self.headers = written.get('headers')

    def _record(self, value) -> tuple:
        """The fields of the value's ProducerRecord (data, as a sink stages them)."""
        topic, key, data = super()._record(Row(*[value[i] for i in self.physical]))
        timestamp = None if self.timestamp is None else value[self.timestamp]
        headers = None if self.headers is None else value[self.headers]
        return tuple(ProducerRecord(topic, key, data, None if timestamp is None else
                                    round(timestamp.timestamp() * 1000),
                                    None if headers is None else list(headers.items())))


class _MetadataRows(_RecordRows):
    """The table row of a Kafka record: the columns of its key and value and its metadata
    columns, in the order they are declared."""

    def __init__(self, layout: _Layout, definition: TableDefinition):
        super().__init__(layout, row_type(definition))
        physical = [n for n, _ in definition.physical_columns()]
        metadata = {c.name: c.metadata_key or c.name for c in definition.metadata_columns()}
        read = [c for c in definition.schema._columns if c.name in physical or c.name in metadata]
        self.picks = [(True, physical.index(c.name)) if c.name in physical else
                      (False, metadata[c.name]) for c in read]
        self.columns = Types.ROW_NAMED([c.name for c in read],
                                       [type_info_of(c.data_type) for c in read])

    def _produced_type(self):
        return self.columns

    def _deserialize_kafka_record(self, record: KafkaRecord):
        row = self._deserialize_record(record.key, record.value)
        if row is None:
            return None
        values = Row(*[row[pick] if physical else _metadata_value(record, pick)
                       for physical, pick in self.picks])
        values.set_field_names(self.columns.get_field_names())
        return values


def _metadata_value(record: KafkaRecord, key: str):
    """The value of a metadata column of ``key``."""
    if key == 'timestamp':
        return _local_time(record.timestamp, 1000)
    if key == 'headers':
        return dict(record.headers)
    return {'topic': record.topic, 'partition': record.partition, 'offset': record.offset,
            'timestamp-type': record.timestamp_type, 'leader-epoch': record.leader_epoch}[key]


KAFKA = SqlConnector(lambda d: _checked(d, False) and None, source=kafka_source,
                     sink=kafka_sink, metadata=tuple(_METADATA))
UPSERT_KAFKA = SqlConnector(lambda d: _checked(d, True) and None,
                            source=lambda env, d, p: kafka_source(env, d, p, upsert=True),
                            sink=kafka_sink, upserts=True, changelog=UpsertChangelog)
