"""The SQL formats of the filesystem and Kafka connectors ('format' = 'csv' | 'json' |
'raw'), on the DataStream row formats, with Flink's ``<format>.*`` options: a table's row
to the bytes of one record and back. Where Flink's SQL formats differ from its DataStream
row formats the values are adapted: DECIMALs are written without trailing zeros
(``12.3``) and read at their column's scale; TIMESTAMPs are ``2024-01-02
10:11:12.345`` (Flink's 'SQL' timestamp standard)."""
import datetime
from decimal import Decimal
from typing import Callable, Dict, List, Optional, Tuple

from api.common.serialization import SimpleStringSchema
from api.common.typeinfo import Types
from api.common.types import Row
from api.datastream.formats._text import timestamp_fraction
# (modules, not their names: api.datastream.formats.csv imports api.table.types, so this
# module may be imported while csv is)
from api.datastream.formats import csv, json
from ..types import DataType, DataTypes, type_info_of
from .options import flag

__all__ = ['FORMAT_OPTIONS', 'RowFormat', 'format_option_keys']

FORMAT_OPTIONS = {
    'csv': ('field-delimiter', 'disable-quote-character', 'quote-character', 'allow-comments',
            'ignore-parse-errors', 'array-element-delimiter', 'escape-character',
            'null-literal'),
    'json': ('ignore-parse-errors', 'fail-on-missing-field', 'timestamp-format.standard'),
    'raw': ('charset',),
}


def format_option_keys(format_name: str, prefix: str = '') -> List[str]:
    """The option keys of a format: ``<prefix><format>.<option>``."""
    return [f'{prefix}{format_name}.{o}' for o in FORMAT_OPTIONS.get(format_name, ())]


class RowFormat:
    """The ``format`` of ``columns`` ((name, DataType) pairs) with its ``options`` (the
    table's, read under ``prefix``: '' or 'key.' / 'value.' for a Kafka key or value):
    ``serialize`` a Row to one record's bytes, ``deserialize`` them (None: an unreadable
    record skipped by 'ignore-parse-errors')."""

    def __init__(self, format_name: str, columns: List[Tuple[str, DataType]],
                 options: Dict[str, str], prefix: str = ''):
        if format_name not in FORMAT_OPTIONS:
            raise ValueError(f"Could not find any format factory for identifier "
                             f"'{format_name}': the formats here are "
                             f"{', '.join(sorted(FORMAT_OPTIONS))}")
        self.names = [n for n, _ in columns]
        key = f'{prefix}{format_name}.'
        self._ignore_errors = flag(options, key + 'ignore-parse-errors')
        adapters = [_adapter(t, format_name) for _, t in columns]
        self._to_inner = [a[1] for a in adapters]
        self._from_inner = [a[2] for a in adapters]
        inner = Types.ROW_NAMED(self.names, [type_info_of(a[0]) for a in adapters])
        if format_name == 'raw':
            if len(columns) != 1 or columns[0][1]._root not in ('STRING', 'VARCHAR', 'CHAR'):
                raise ValueError("The 'raw' format supports only one STRING column here, got "
                                 f"{', '.join('%s %s' % c for c in columns)}")
            raw = SimpleStringSchema(options.get(key + 'charset', 'UTF-8'))
            self._serializer = self._deserializer = raw
        elif format_name == 'csv':
            self._serializer, self._deserializer = _csv_schemas(inner, options, key)
        else:
            if options.get(key + 'timestamp-format.standard', 'SQL') != 'SQL':
                raise NotImplementedError("'json.timestamp-format.standard' is 'SQL' here")
            self._serializer = json.JsonRowSerializationSchema.builder().with_type_info(inner) \
                .build()
            builder = json.JsonRowDeserializationSchema.builder().type_info(inner)
            if self._ignore_errors:
                builder.ignore_parse_errors()
            if flag(options, key + 'fail-on-missing-field'):
                builder.fail_on_missing_field()
            self._deserializer = builder.build()
        self._raw = format_name == 'raw'

    def serialize(self, row) -> bytes:
        """The bytes of one record of ``row``'s values (by position)."""
        if self._raw:
            return None if row[0] is None else self._serializer._serialize(row[0])
        return self._serializer._serialize(Row(*[
            None if v is None else to(v) for to, v in zip(self._to_inner, row)]))

    def deserialize(self, message: bytes) -> Optional[Row]:
        """The Row of one record's bytes, named by the columns; None if it is unreadable
        and parse errors are ignored."""
        if self._raw:
            values = [None if message is None else self._deserializer._deserialize(message)]
        else:
            inner = self._deserializer._deserialize(message)
            if inner is None:
                return None
            values = [None if v is None else self._read(read, v)
                      for read, v in zip(self._from_inner, inner)]
        row = Row(*values)
        row.set_field_names(self.names)
        return row

    def _read(self, read: Callable, value):
        try:
            return read(value)
        except ValueError:
            if self._ignore_errors:
                return None
            raise


def _csv_schemas(inner, options: Dict[str, str], key: str):
    """The CSV row schemas of the ``csv.*`` options (``key``: their prefix)."""
    writer = csv.CsvRowSerializationSchema.Builder(inner).set_line_delimiter('')
    reader = csv.CsvRowDeserializationSchema.Builder(inner)
    for builder in (writer, reader):
        if key + 'field-delimiter' in options:
            builder.set_field_delimiter(_unescaped(options[key + 'field-delimiter']))
        if flag(options, key + 'disable-quote-character'):
            builder.disable_quote_character()
        elif key + 'quote-character' in options:
            builder.set_quote_character(options[key + 'quote-character'])
        if key + 'array-element-delimiter' in options:
            builder.set_array_element_delimiter(options[key + 'array-element-delimiter'])
        if key + 'escape-character' in options:
            builder.set_escape_character(options[key + 'escape-character'])
        if key + 'null-literal' in options:
            builder.set_null_literal(options[key + 'null-literal'])
    reader.set_ignore_parse_errors(flag(options, key + 'ignore-parse-errors'))
    reader.set_allow_comments(flag(options, key + 'allow-comments'))
    return writer.build(), reader.build()


def _unescaped(delimiter: str) -> str:
    """A delimiter option: Flink reads '\\t' as a tab."""
    return '\t' if delimiter == '\\t' else delimiter


def _adapter(data_type: DataType, format_name: str) -> Tuple[DataType, Callable, Callable]:
    """(the DataStream format's type of a column, its value to that format's, back)."""
    if data_type._root == 'DECIMAL':
        scale = Decimal(1).scaleb(-data_type._args[1])
        return data_type, _plain, lambda v: Decimal(v).quantize(scale)
    if data_type._root == 'TIMESTAMP':
        return DataTypes.STRING(), _sql_timestamp, _read_sql_timestamp
    return data_type, _same, _same


def _same(value):
    return value


def _plain(value: Decimal) -> Decimal:
    """A decimal without trailing zeros, in plain notation (Java's
    ``stripTrailingZeros().toPlainString()``)."""
    value = Decimal(value).normalize()
    return value.quantize(Decimal(1)) if value.as_tuple().exponent > 0 else value


def _sql_timestamp(value: datetime.datetime) -> str:
    fraction = timestamp_fraction(value)
    return value.strftime('%Y-%m-%d %H:%M:%S') + ('.' + fraction if fraction else '')


def _read_sql_timestamp(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.strip().replace(' ', 'T', 1)) \
        if ' ' in text.strip() else _no_timestamp(text)


def _no_timestamp(text: str):
    raise ValueError(f"Failed to deserialize TIMESTAMP {text!r}: the 'SQL' standard is "
                     "'yyyy-MM-dd HH:mm:ss[.fraction]'")
