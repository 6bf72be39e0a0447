"""CSV formats, as in ``pyflink.datastream.formats.csv``.

:class:`CsvRowSerializationSchema` and :class:`CsvRowDeserializationSchema` turn a Row into
one CSV line and back, as Flink's row schemas do: fields in the order of the row type,
separated by the field delimiter (``,``), the line ended by the line delimiter (``\\n``);
numbers and booleans as Java prints them, dates ``2020-01-02``, times ``10:11:12``,
timestamps ``2020-01-02 10:11:12.345``, byte arrays in Base64, arrays and nested rows as
their elements joined by the array element delimiter (``;``), null fields as the null
literal (empty). A text value is quoted (``"``, a quote inside doubled) when it contains a
character that sorts before or at the field delimiter, the quote character or a line
delimiter character (this includes spaces, and digits for some delimiters, as in Flink), or
the escape character (a backslash when none is set).

The file formats read and write the columns of a :class:`CsvSchema`, typed with the Table
API's ``DataTypes`` as in PyFlink (a number column is ``DataTypes.BIGINT()`` unless
``number_type`` gives another type, an array column an ``ARRAY`` of its ``element_type``,
``DataTypes.STRING()`` by default): :class:`CsvReaderFormat` reads a CSV file into Rows for
FileSource, and :class:`CsvBulkWriters` writes Rows into CSV part files with FileSink.
"""
import base64
import binascii
import csv
import datetime
import io
import re
from typing import Callable, List, Optional

from engine.io.files.sink import EncodedFormat
from engine.io.files.source import CsvFormat

from api.common.serialization import (BulkWriterFactory, DeserializationSchema,
                                      RowDataBulkWriterFactory, SerializationSchema)
from api.common.typeinfo import RowTypeInfo, TypeInformation
from api.datastream.connectors.file_system import StreamFormat
from api.table.types import DataType, DataTypes, checked_data_type, type_info_of

from ._text import (checked_row_type, decimal_string, element_type, float_string, java_trim,
                    kind_of, parse_decimal, parse_double, parse_integer, time_string,
                    timestamp_fraction)

__all__ = ['CsvSchema', 'CsvSchemaBuilder', 'CsvReaderFormat', 'CsvBulkWriters',
           'CsvRowDeserializationSchema', 'CsvRowSerializationSchema']

_LINE_DELIMITERS = ('\n', '\r', '\r\n', '')


def _single_char(value, what: str) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise ValueError(f"{what} must be a single char, got {value!r}")
    return value


def _not_none(value, what: str):
    if value is None:
        raise TypeError(f"{what} must not be None")
    return value


class CsvRowSerializationSchema(SerializationSchema):
    """Writes a Row of the given type as one CSV line::

        CsvRowSerializationSchema.Builder(Types.ROW([Types.INT(), Types.STRING()]))
            .set_field_delimiter(';').build()
    """

    def __init__(self, type_info: RowTypeInfo, field_delimiter: str, line_delimiter: str,
                 array_element_delimiter: str, quote_character: Optional[str],
                 escape_character: Optional[str], null_literal: str):
        self._type_info = type_info
        self._field_delimiter = field_delimiter
        self._line_delimiter = line_delimiter
        self._array_element_delimiter = array_element_delimiter
        self._quote_character = quote_character
        self._escape_character = escape_character
        self._null_literal = null_literal
        # Jackson's CSV writer quotes a text containing any character up to this one.
        self._max_unsafe = max(map(ord, field_delimiter + (quote_character or '') +
                                   line_delimiter))
        self._fields = [self._field_writer(t) for t in type_info.get_field_types()]

    def _serialize(self, value) -> bytes:
        row = self._type_info.convert(value)
        line = self._field_delimiter.join(
            self._null_literal if v is None else write(v) for write, v in zip(self._fields, row))
        return (line + self._line_delimiter).encode('utf-8')

    def _quoted(self, text: str) -> str:
        quote, escape = self._quote_character, self._escape_character
        # Without an escape character, Jackson still quotes a backslash.
        special = escape or '\\'
        if quote is None or not any(ord(c) <= self._max_unsafe or c == special for c in text):
            return text
        if escape is not None:
            text = text.replace(escape, escape + escape)
        return quote + text.replace(quote, quote + quote) + quote

    def _field_writer(self, type_info: TypeInformation) -> Callable:
        """A function from a converted, non-null field value to its CSV text."""
        kind = kind_of(type_info)
        if kind == 'Row':
            texts = [_scalar_text(t, 'serialization') for t in type_info.get_field_types()]
            return lambda row: self._quoted(self._joined(zip(texts, row)))
        if kind == 'Array':
            text = _scalar_text(element_type(type_info), 'serialization')
            return lambda values: self._quoted(self._joined((text, v) for v in values))
        text = _scalar_text(type_info, 'serialization')
        if kind in ('String', 'Date', 'Time', 'Timestamp', 'Bytes'):
            return lambda v: self._quoted(text(v))
        return text  # numbers and booleans are never quoted

    def _joined(self, texts_and_values) -> str:
        """The elements of an array or nested row, joined by the array element delimiter."""
        return self._array_element_delimiter.join(
            self._null_literal if v is None else text(v) for text, v in texts_and_values)

    class Builder(object):
        """Builds a CsvRowSerializationSchema for a row type."""

        def __init__(self, type_info: TypeInformation):
            if type_info is None:
                raise TypeError("Type information must not be None")
            self._type_info = checked_row_type(type_info, "CsvRowSerializationSchema")
            self._field_delimiter = ','
            self._line_delimiter = '\n'
            self._array_element_delimiter = ';'
            self._quote_character = '"'
            self._escape_character = None
            self._null_literal = ''

        def set_field_delimiter(self, c: str) -> 'CsvRowSerializationSchema.Builder':
            """The character between fields (default ``,``)."""
            self._field_delimiter = _single_char(c, "Field delimiter")
            return self

        def set_line_delimiter(self, delimiter: str) -> 'CsvRowSerializationSchema.Builder':
            """What ends each line: ``\\n`` (default), ``\\r``, ``\\r\\n`` or nothing."""
            if delimiter not in _LINE_DELIMITERS:
                raise ValueError("Unsupported new line delimiter. Only \\n, \\r, \\r\\n, or "
                                 "empty string are supported.")
            self._line_delimiter = delimiter
            return self

        def set_array_element_delimiter(self, delimiter: str
                                        ) -> 'CsvRowSerializationSchema.Builder':
            """The text between the elements of an array or nested row (default ``;``)."""
            self._array_element_delimiter = _not_none(delimiter, "Delimiter")
            return self

        def disable_quote_character(self) -> 'CsvRowSerializationSchema.Builder':
            """Never quotes a value."""
            self._quote_character = None
            return self

        def set_quote_character(self, c: str) -> 'CsvRowSerializationSchema.Builder':
            """The character enclosing values that need it (default ``"``)."""
            self._quote_character = _single_char(c, "Quote character")
            return self

        def set_escape_character(self, c: str) -> 'CsvRowSerializationSchema.Builder':
            """A character doubled inside quoted values (default: none)."""
            self._escape_character = _single_char(c, "Escape character")
            return self

        def set_null_literal(self, s: str) -> 'CsvRowSerializationSchema.Builder':
            """The text written for a null field (default: empty)."""
            self._null_literal = _not_none(s, "Null literal")
            return self

        def build(self) -> 'CsvRowSerializationSchema':
            return CsvRowSerializationSchema(
                self._type_info, self._field_delimiter, self._line_delimiter,
                self._array_element_delimiter, self._quote_character, self._escape_character,
                self._null_literal)


class CsvRowDeserializationSchema(DeserializationSchema):
    """Reads the first CSV line of a message into a Row of the given type::

        CsvRowDeserializationSchema.Builder(Types.ROW([Types.INT(), Types.STRING()]))
            .set_ignore_parse_errors(True).build()

    Text fields are kept as they are (spaces included); numbers and booleans are read
    trimmed. A line with another number of fields than the row type fails; with
    ``set_ignore_parse_errors(True)`` a field that cannot be read is null, a short line
    gives nulls for the missing fields, and an unreadable message gives no record.
    """

    def __init__(self, type_info: RowTypeInfo, field_delimiter: str, allow_comments: bool,
                 array_element_delimiter: str, quote_character: str,
                 escape_character: Optional[str], null_literal: Optional[str],
                 ignore_parse_errors: bool):
        self._type_info = type_info
        self._field_delimiter = field_delimiter
        self._allow_comments = allow_comments
        self._array_element_delimiter = array_element_delimiter
        self._quote_character = quote_character
        self._escape_character = escape_character
        self._null_literal = null_literal
        self._ignore_parse_errors = ignore_parse_errors
        self._fields = [self._field_reader(t) for t in type_info.get_field_types()]

    def _deserialize(self, message: bytes):
        try:
            values = self._read_row(self._first_record(bytes(message)), self._fields, True)
        except Exception as e:
            if self._ignore_parse_errors:
                return None
            text = bytes(message).decode('utf-8', 'replace')
            raise ValueError(f"Failed to deserialize CSV row {text[:200]!r}: {e}") from e
        return self._type_info.convert(values)

    def _produced_type(self) -> TypeInformation:
        return self._type_info

    def _first_record(self, message: bytes) -> List[str]:
        text = message.decode('utf-8')
        if self._allow_comments:
            while text.startswith('#'):
                end = re.search('\r\n|\r|\n', text)
                text = text[end.end():] if end else ''
        reader = csv.reader(io.StringIO(text, newline=''), delimiter=self._field_delimiter,
                            quotechar=self._quote_character,
                            escapechar=self._escape_character, doublequote=True,
                            strict=False)
        record = next(reader, None)
        if record is None:
            raise ValueError("No content to map due to end-of-input")
        return record or ['']  # an empty line is one empty field

    def _read_row(self, texts: List[str], fields: List[Callable], top_level: bool) -> list:
        if top_level and len(texts) > len(fields):
            raise ValueError(f"Too many entries: expected at most {len(fields)}, got "
                             f"{len(texts)}")
        if len(texts) != len(fields) and not self._ignore_parse_errors:
            raise ValueError(f"Row length mismatch. {len(fields)} fields expected but was "
                             f"{len(texts)}.")
        return [read(text) for read, text in zip(fields, texts)] + \
            [None] * max(0, len(fields) - len(texts))

    def _nullable(self, read: Callable) -> Callable:
        def read_nullable(text: str):
            if text == self._null_literal:
                return None
            try:
                return read(text)
            except Exception:
                if self._ignore_parse_errors:
                    return None
                raise
        return read_nullable

    def _field_reader(self, type_info: TypeInformation) -> Callable:
        kind = kind_of(type_info)
        if kind == 'Row':
            nested = [self._nullable(_scalar_reader(t)) for t in type_info.get_field_types()]
            read = lambda text: self._read_row(self._elements(text), nested, False)  # noqa: E731
        elif kind == 'Array':
            element = self._nullable(_scalar_reader(element_type(type_info)))
            read = lambda text: [element(e) for e in self._elements(text)]  # noqa: E731
        else:
            read = _scalar_reader(type_info)
        return self._nullable(read)

    def _elements(self, text: str) -> List[str]:
        return text.split(self._array_element_delimiter) if text else []

    class Builder(object):
        """Builds a CsvRowDeserializationSchema for a row type."""

        def __init__(self, type_info: TypeInformation):
            if type_info is None:
                raise TypeError("Type information must not be None")
            self._type_info = checked_row_type(type_info, "CsvRowDeserializationSchema")
            self._field_delimiter = ','
            self._allow_comments = False
            self._array_element_delimiter = ';'
            self._quote_character = '"'
            self._escape_character = None
            self._null_literal = None
            self._ignore_parse_errors = False

        def set_field_delimiter(self, delimiter: str) -> 'CsvRowDeserializationSchema.Builder':
            """The character between fields (default ``,``)."""
            self._field_delimiter = _single_char(delimiter, "Field delimiter")
            return self

        def set_allow_comments(self, allow_comments: bool
                               ) -> 'CsvRowDeserializationSchema.Builder':
            """Skips lines starting with ``#``."""
            self._allow_comments = allow_comments
            return self

        def set_array_element_delimiter(self, delimiter: str
                                        ) -> 'CsvRowDeserializationSchema.Builder':
            """The text between the elements of an array or nested row (default ``;``)."""
            self._array_element_delimiter = _not_none(delimiter,
                                                      "Array element delimiter")
            return self

        def set_quote_character(self, c: str) -> 'CsvRowDeserializationSchema.Builder':
            """The character enclosing quoted values (default ``"``)."""
            self._quote_character = _single_char(c, "Quote character")
            return self

        def set_escape_character(self, c: str) -> 'CsvRowDeserializationSchema.Builder':
            """A character making the next one literal (default: none)."""
            self._escape_character = _single_char(c, "Escape character")
            return self

        def set_null_literal(self, null_literal: str) -> 'CsvRowDeserializationSchema.Builder':
            """A text read as a null field (default: none; an empty field is empty text)."""
            self._null_literal = _not_none(null_literal, "Null literal")
            return self

        def set_ignore_parse_errors(self, ignore_parse_errors: bool
                                    ) -> 'CsvRowDeserializationSchema.Builder':
            """Reads unreadable fields as null and unreadable lines as no record, instead
            of failing."""
            self._ignore_parse_errors = ignore_parse_errors
            return self

        def build(self) -> 'CsvRowDeserializationSchema':
            return CsvRowDeserializationSchema(
                self._type_info, self._field_delimiter, self._allow_comments,
                self._array_element_delimiter, self._quote_character, self._escape_character,
                self._null_literal, self._ignore_parse_errors)


# --- field values --------------------------------------------------------------------

def _unsupported(type_info, direction: str):
    return ValueError(f"CSV {direction}: unsupported type information {type_info!r} (CSV rows "
                      f"hold basic types, dates and times, byte arrays, and arrays or rows of "
                      f"these)")


def _scalar_text(type_info: TypeInformation, direction: str) -> Callable:
    """A function from a converted, non-null value of a non-container type to its text."""
    kind = kind_of(type_info)
    text = {
        'String': str, 'Boolean': lambda v: 'true' if v else 'false',
        'Byte': str, 'Short': str, 'Integer': str, 'Long': str, 'BigInteger': str,
        'Float': lambda v: float_string(v, type_info),
        'Double': lambda v: float_string(v, type_info),
        'BigDecimal': decimal_string, 'Date': datetime.date.isoformat, 'Time': time_string,
        'Timestamp': lambda v: '%s.%s' % (v.strftime('%Y-%m-%d %H:%M:%S'),
                                          timestamp_fraction(v) or '0'),
        'Bytes': lambda v: base64.b64encode(v).decode('ascii'),
    }.get(kind)
    if text is None:
        raise _unsupported(type_info, direction)
    return text


_SQL_DATE = re.compile(r'([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})')
_SQL_TIME = re.compile(r'([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})')
_SQL_TIMESTAMP = re.compile(r'([0-9]{4})-([0-9]{1,2})-([0-9]{1,2}) '
                            r'([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.([0-9]{0,9}))?')


def _sql_fields(pattern, text: str, form: str) -> List[int]:
    match = pattern.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not of the form {form}")
    return [int(g) for g in match.groups()[:6]]


def _read_timestamp(text: str) -> datetime.datetime:
    fields = _sql_fields(_SQL_TIMESTAMP, text, "yyyy-mm-dd hh:mm:ss[.fffffffff]")
    fraction = _SQL_TIMESTAMP.fullmatch(text).group(7) or ''
    return datetime.datetime(*fields, int(fraction.ljust(9, '0')[:6]))


def _read_bytes(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as e:
        raise ValueError(f"Unable to deserialize byte array: {e}") from None


def _scalar_reader(type_info: TypeInformation) -> Callable:
    """A function from a field's text to its value, for a non-container type."""
    kind = kind_of(type_info)
    read = {
        'String': str, 'Boolean': lambda text: java_trim(text).lower() == 'true',
        'Byte': lambda text: parse_integer(text, type_info),
        'Short': lambda text: parse_integer(text, type_info),
        'Integer': lambda text: parse_integer(text, type_info),
        'Long': lambda text: parse_integer(text, type_info),
        'BigInteger': lambda text: parse_integer(text, type_info),
        'Float': parse_double, 'Double': parse_double, 'BigDecimal': parse_decimal,
        'Date': lambda text: datetime.date(*_sql_fields(_SQL_DATE, text, "yyyy-[m]m-[d]d")),
        'Time': lambda text: datetime.time(*_sql_fields(_SQL_TIME, text, "hh:mm:ss")),
        'Timestamp': _read_timestamp, 'Bytes': _read_bytes,
    }.get(kind)
    if read is None:
        raise _unsupported(type_info, 'deserialization')
    return read


# --- schemas and file formats ----------------------------------------------------------

class CsvSchema(object):
    """The columns and the dialect of CSV files, built with :meth:`builder`."""

    def __init__(self, columns: list, options: dict):
        self._columns = columns  # (name, kind, DataType, column options), in file order
        self._options = options
        # The Rows this schema reads and writes: one field per column.
        self._row_type = DataTypes.ROW([DataTypes.FIELD(name, data_type)
                                        for name, _, data_type, _ in columns])

    @staticmethod
    def builder() -> 'CsvSchemaBuilder':
        return CsvSchemaBuilder()

    def size(self) -> int:
        """The number of columns."""
        return len(self._columns)

    def __len__(self):
        return self.size()

    def __str__(self):
        columns = ','.join('"%s"/%s' % (name, kind) for name, kind, _, _ in self._columns)
        flag = {True: 'true', False: 'false'}
        return (f"[CsvSchema: columns=[{columns}], "
                f"header? {flag[bool(self._options['use_header'])]}, "
                f"skipFirst? {flag[bool(self._options['skip_first_data_row'])]}, "
                f"comments? {flag[bool(self._options['allow_comments'])]}, "
                f"any-properties? N/A]")

    def __repr__(self):
        return str(self)


class CsvSchemaBuilder(object):
    """Builds a :class:`CsvSchema`: its columns (name and type, in file order) and dialect."""

    def __init__(self):
        self._columns = []
        self._options = {'use_header': False, 'skip_first_data_row': False,
                         'allow_comments': False, 'column_separator': ',',
                         'quote_char': '"', 'escape_char': None, 'line_separator': '\n',
                         'null_value': None, 'array_element_separator': ';',
                         'strict_headers': False, 'any_property_name': None}

    def build(self) -> 'CsvSchema':
        return CsvSchema(list(self._columns), dict(self._options))

    def add_array_column(self, name: str, separator: str = ';',
                         element_type: Optional[DataType] = None) -> 'CsvSchemaBuilder':
        """Adds a column of arrays whose elements are separated by ``separator``; the
        elements are of ``element_type`` (default ``DataTypes.STRING()``)."""
        element_type = DataTypes.STRING() if element_type is None else element_type
        checked_data_type(f"CsvSchema column {name!r}", 'element_type', element_type)
        return self._add(name, 'ARRAY', DataTypes.ARRAY(element_type), separator=separator)

    def add_boolean_column(self, name: str) -> 'CsvSchemaBuilder':
        """Adds a column of ``DataTypes.BOOLEAN()``."""
        return self._add(name, 'BOOLEAN', DataTypes.BOOLEAN())

    def add_number_column(self, name: str, number_type: Optional[DataType] = None
                          ) -> 'CsvSchemaBuilder':
        """Adds a column of numbers of ``number_type`` (default ``DataTypes.BIGINT()``)."""
        number_type = DataTypes.BIGINT() if number_type is None else number_type
        return self._add(name, 'NUMBER', checked_data_type(f"CsvSchema column {name!r}",
                                                           'number_type', number_type))

    def add_string_column(self, name: str) -> 'CsvSchemaBuilder':
        """Adds a column of ``DataTypes.STRING()``."""
        return self._add(name, 'STRING', DataTypes.STRING())

    def _add(self, name: str, kind: str, data_type: DataType, **options) -> 'CsvSchemaBuilder':
        self._columns.append((name, kind, data_type, options))
        return self

    def add_columns_from(self, schema: 'CsvSchema') -> 'CsvSchemaBuilder':
        """Adds the columns of another schema."""
        self._columns.extend(schema._columns)
        return self

    def clear_columns(self) -> 'CsvSchemaBuilder':
        self._columns.clear()
        return self

    def set_allow_comments(self, allow: bool = True) -> 'CsvSchemaBuilder':
        self._options['allow_comments'] = allow
        return self

    def set_any_property_name(self, name: str) -> 'CsvSchemaBuilder':
        self._options['any_property_name'] = name
        return self

    def disable_array_element_separator(self) -> 'CsvSchemaBuilder':
        self._options['array_element_separator'] = None
        return self

    def remove_array_element_separator(self, index: int) -> 'CsvSchemaBuilder':
        """Makes column ``index`` use no array element separator."""
        name, kind, data_type, options = self._columns[index]
        self._columns[index] = (name, kind, data_type, dict(options, separator=None))
        return self

    def set_array_element_separator(self, separator: str) -> 'CsvSchemaBuilder':
        self._options['array_element_separator'] = separator
        return self

    def set_column_separator(self, char: str) -> 'CsvSchemaBuilder':
        if len(char) != 1:
            raise ValueError('Column separator must be a single char, got {}'.format(char))
        self._options['column_separator'] = char
        return self

    def disable_escape_char(self) -> 'CsvSchemaBuilder':
        self._options['escape_char'] = None
        return self

    def set_escape_char(self, char: str) -> 'CsvSchemaBuilder':
        if len(char) != 1:
            raise ValueError('Escape char must be a single char, got {}'.format(char))
        self._options['escape_char'] = char
        return self

    def set_line_separator(self, separator: str) -> 'CsvSchemaBuilder':
        self._options['line_separator'] = separator
        return self

    def set_null_value(self, null_value: str) -> 'CsvSchemaBuilder':
        self._options['null_value'] = null_value
        return self

    def disable_quote_char(self) -> 'CsvSchemaBuilder':
        self._options['quote_char'] = None
        return self

    def set_quote_char(self, char: str) -> 'CsvSchemaBuilder':
        if len(char) != 1:
            raise ValueError('Quote char must be a single char, got {}'.format(char))
        self._options['quote_char'] = char
        return self

    def set_skip_first_data_row(self, skip: bool = True) -> 'CsvSchemaBuilder':
        self._options['skip_first_data_row'] = skip
        return self

    def set_strict_headers(self, strict: bool = True) -> 'CsvSchemaBuilder':
        self._options['strict_headers'] = strict
        return self

    def set_use_header(self, use: bool = True) -> 'CsvSchemaBuilder':
        self._options['use_header'] = use
        return self

    def size(self) -> int:
        """The number of columns added so far."""
        return len(self._columns)

    def __len__(self):
        return self.size()


class CsvReaderFormat(StreamFormat):
    """Reads CSV files with a :class:`CsvSchema` in a FileSource: one Row per CSV record
    (a quoted value may span lines), typed ``Types.ROW_NAMED`` with the schema's column
    names. A missing trailing value is null; a record with more values than columns, or a
    value that is not of its column's type, fails the job naming the file and offset."""

    @staticmethod
    def for_schema(schema: 'CsvSchema') -> 'CsvReaderFormat':
        return CsvReaderFormat('CsvReaderFormat.for_schema', schema=schema)

    def _produced_type(self) -> RowTypeInfo:
        return type_info_of(self._settings['schema']._row_type)

    def _engine_format(self) -> CsvFormat:
        schema = self._settings['schema']
        options = schema._options
        row_type = self._produced_type()
        null_value = options['null_value']
        readers = []
        for (name, kind, _, column), t in zip(schema._columns, row_type.get_field_types()):
            if kind == 'ARRAY':
                separator = column.get('separator', options['array_element_separator'])
                read = _array_reader(_scalar_reader(element_type(t)), separator)
            else:
                read = _scalar_reader(t)
            readers.append((name, read))
        convert = row_type.convert

        def parse(texts: List[str]):
            if len(texts) > len(readers):
                raise ValueError(f"Too many entries: expected at most {len(readers)}, got "
                                 f"{len(texts)}")
            values = []
            for (name, read), text in zip(readers, texts):
                try:
                    values.append(None if text == null_value else read(text))
                except Exception as e:
                    raise ValueError(f"Fail to deserialize at field: {name}. {e}") from None
            return convert(values + [None] * (len(readers) - len(texts)))
        skipped_rows = int(bool(options['use_header'])) + \
            int(bool(options['skip_first_data_row']))
        return CsvFormat(parse, 'utf-8', options['column_separator'], options['quote_char'],
                         options['escape_char'], skipped_rows, bool(options['allow_comments']))


def _array_reader(read_element: Callable, separator: Optional[str]) -> Callable:
    if separator is None:
        return lambda text: [read_element(text)]
    return lambda text: [read_element(e) for e in text.split(separator)] if text else []


class CsvBulkWriters(object):
    """Bulk writers of CSV files for FileSink."""

    @staticmethod
    def for_schema(schema: 'CsvSchema') -> BulkWriterFactory:
        """Writes Rows with the columns and the dialect of ``schema`` (a header line
        starts each part file when the schema ``set_use_header``)."""
        return _CsvWriterFactory('CsvBulkWriters.for_schema', schema._row_type,
                                 schema=schema)


class _CsvWriterFactory(RowDataBulkWriterFactory):
    """Writes each batch's rows of a subtask into one CSV part file."""

    def _part_format(self, type_info: TypeInformation) -> EncodedFormat:
        schema = self._settings['schema']
        options = schema._options
        separators = [column.get('separator') for _, kind, _, column in schema._columns
                      if kind == 'ARRAY']
        builder = CsvRowSerializationSchema.Builder(type_info_of(self._row_type)) \
            .set_field_delimiter(options['column_separator']) \
            .set_array_element_delimiter(next(iter(separators), None) or
                                         options['array_element_separator'] or ';') \
            .set_line_delimiter(options['line_separator']) \
            .set_null_literal(options['null_value'] or '')
        if options['quote_char'] is None:
            builder.disable_quote_character()
        else:
            builder.set_quote_character(options['quote_char'])
        if options['escape_char'] is not None:
            builder.set_escape_character(options['escape_char'])
        serializer = builder.build()
        header = b''
        if options['use_header']:
            names = [serializer._quoted(name) for name in self._row_type.field_names()]
            header = (options['column_separator'].join(names) +
                      options['line_separator']).encode('utf-8')
        return EncodedFormat(serializer._serialize, header)
