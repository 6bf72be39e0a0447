"""Flink SQL's CREATE TABLE, read into what the Table bridge needs: the table's name, a
:class:`Schema` of its columns (types in Flink's syntax, computed columns, watermark,
primary key) and its ``WITH`` options. A statement it cannot read fails naming the part."""
import re
from dataclasses import dataclass
from typing import Dict, List

from .schema import PhysicalColumn, Schema
from .types import DataType, DataTypes

__all__ = ['TableDefinition', 'parse_create_table', 'parse_data_type']

_CREATE = re.compile(r'\s*CREATE\s+(?:TEMPORARY\s+)?TABLE\s+(IF\s+NOT\s+EXISTS\s+)?'
                     r'((?:`[^`]+`|[\w$]+)(?:\.(?:`[^`]+`|[\w$]+))*)\s*\(', re.I)
_OPTION = re.compile(r"\s*'((?:[^']|'')*)'\s*=\s*'((?:[^']|'')*)'\s*(,|$)")
_IDENTIFIER = r'`(?:[^`]|``)+`|[A-Za-z_$][\w$]*'


@dataclass
class TableDefinition:
    """A CREATE TABLE statement: name, declared columns and connector options."""
    name: str
    schema: Schema
    options: Dict[str, str]
    if_not_exists: bool

    def physical_columns(self) -> List[tuple]:
        """(name, DataType) of the columns a connector reads or writes."""
        return [(c.name, c.data_type) for c in self.schema._columns
                if isinstance(c, PhysicalColumn)]


def parse_create_table(stmt: str) -> TableDefinition:
    """The definition of a ``CREATE TABLE name (...) WITH (...)`` statement."""
    header = _CREATE.match(stmt)
    if header is None:
        raise ValueError(f"cannot read {_head(stmt)} as CREATE TABLE name (columns) WITH "
                         "(options)")
    close = _closing(stmt, header.end() - 1)
    builder = Schema.new_builder()
    items = _split(stmt[header.end():close])
    names = [_name(m.group(0)) for m in (re.match(_IDENTIFIER, i) for i in items) if m]
    for item in items:
        _declare(builder, item, names)
    rest = stmt[close + 1:].strip()
    rest = re.sub(r"^COMMENT\s+'(?:[^']|'')*'\s*", '', rest, flags=re.I)
    if re.match(r'PARTITIONED\s+BY', rest, re.I):
        raise NotImplementedError("CREATE TABLE: PARTITIONED BY is not available here")
    with_clause = re.match(r'WITH\s*\(', rest, re.I)
    if with_clause is None:
        raise ValueError("CREATE TABLE: a table here needs WITH ('connector' = ...)")
    end = _closing(rest, with_clause.end() - 1)
    if rest[end + 1:].strip().rstrip(';').strip():
        raise ValueError(f"CREATE TABLE: cannot read {_head(rest[end + 1:])} after WITH (...)")
    options, text = {}, rest[with_clause.end():end].strip()
    while text:
        option = _OPTION.match(text)
        if option is None:
            raise ValueError(f"CREATE TABLE: cannot read the option {_head(text)}; options "
                             "are 'key' = 'value'")
        options[option.group(1).replace("''", "'")] = option.group(2).replace("''", "'")
        text = text[option.end():].strip()
    return TableDefinition(_name(header.group(2).split('.')[-1]), builder.build(), options,
                           header.group(1) is not None)


def _declare(builder: 'Schema.Builder', item: str, names: List[str]) -> None:
    """Adds one item of the column list to ``builder`` (in expressions, ``names`` of
    columns are quoted, as Flink shows them)."""
    watermark = re.fullmatch(r'WATERMARK\s+FOR\s+(%s)\s+AS\s+(.+)' % _IDENTIFIER, item,
                             re.I | re.S)
    if watermark:
        builder.watermark(_name(watermark.group(1)), _quoted(watermark.group(2).strip(), names))
        return
    key = re.fullmatch(r'(?:CONSTRAINT\s+(%s)\s+)?PRIMARY\s+KEY\s*\(([^)]*)\)\s*NOT\s+ENFORCED'
                       % _IDENTIFIER, item, re.I)
    if key:
        names = [_name(n.strip()) for n in key.group(2).split(',')]
        if key.group(1):
            builder.primary_key_named(_name(key.group(1)), *names)
        else:
            builder.primary_key(*names)
        return
    column = re.fullmatch(r'(%s)\s+(.+)' % _IDENTIFIER, item, re.S)
    if column is None:
        raise ValueError(f"CREATE TABLE: cannot read the column {_head(item)}")
    name, definition = _name(column.group(1)), column.group(2).strip()
    computed = re.fullmatch(r'AS\s+(.+?)(\s+COMMENT\s+\'(?:[^\']|\'\')*\')?', definition,
                            re.I | re.S)
    if computed:
        builder.column_by_expression(name, _quoted(computed.group(1).strip(), names))
        return
    definition = re.sub(r"\s+COMMENT\s+'(?:[^']|'')*'\s*$", '', definition, flags=re.I)
    inline_key = re.search(r'\s+PRIMARY\s+KEY\s+NOT\s+ENFORCED\s*$', definition, re.I)
    if inline_key:
        definition = definition[:inline_key.start()]
    metadata = re.search(r"\s+METADATA(?:\s+FROM\s+'((?:[^']|'')*)')?(\s+VIRTUAL)?\s*$",
                         definition, re.I)
    if metadata:
        builder.column_by_metadata(name, parse_data_type(definition[:metadata.start()]),
                                   metadata.group(1), metadata.group(2) is not None)
    else:
        builder.column(name, parse_data_type(definition))
    if inline_key:
        builder.primary_key(name)


# --- Flink's type syntax ------------------------------------------------------------------
_SIMPLE = {'BOOLEAN': DataTypes.BOOLEAN, 'TINYINT': DataTypes.TINYINT,
           'SMALLINT': DataTypes.SMALLINT, 'INT': DataTypes.INT, 'INTEGER': DataTypes.INT,
           'BIGINT': DataTypes.BIGINT, 'FLOAT': DataTypes.FLOAT, 'DOUBLE': DataTypes.DOUBLE,
           'STRING': DataTypes.STRING, 'BYTES': DataTypes.BYTES, 'DATE': DataTypes.DATE}
_TOKEN = re.compile(r'\s*(`(?:[^`]|``)+`|[A-Za-z_$][\w$]*|\d+|[(),<>])')


def parse_data_type(text: str) -> DataType:
    """The DataType of a Flink SQL type: ``INT NOT NULL``, ``VARCHAR(10)``,
    ``DECIMAL(10, 2)``, ``TIMESTAMP(3)``, ``TIMESTAMP_LTZ(3)``, ``ARRAY<INT>``,
    ``MAP<STRING, INT>``, ``ROW<a INT, b STRING>``."""
    tokens, position = [], 0
    while position < len(text.rstrip()):
        token = _TOKEN.match(text, position)
        if token is None:
            raise ValueError(f"cannot read the type {text.strip()!r} at {text[position:]!r}")
        tokens.append(token.group(1))
        position = token.end()
    parser = _TypeParser(tokens, text.strip())
    data_type = parser.data_type()
    if parser.tokens:
        raise ValueError(f"cannot read the type {text.strip()!r}: {' '.join(parser.tokens)!r} "
                         "is left over")
    return data_type


class _TypeParser:

    def __init__(self, tokens: List[str], text: str):
        self.tokens = tokens
        self.text = text

    def take(self, *words: str) -> bool:
        if self.tokens and self.tokens[0].upper() in words:
            self.tokens.pop(0)
            return True
        return False

    def expect(self, word: str) -> None:
        if not self.take(word):
            raise ValueError(f"cannot read the type {self.text!r}: expected {word!r}")

    def number(self) -> int:
        if not self.tokens or not self.tokens[0].isdigit():
            raise ValueError(f"cannot read the type {self.text!r}: expected a number")
        return int(self.tokens.pop(0))

    def parameters(self, *defaults: int) -> List[int]:
        """``(a, b)`` after a type name, or ``defaults``."""
        if not self.take('('):
            return list(defaults)
        values = [self.number()]
        while self.take(','):
            values.append(self.number())
        self.expect(')')
        return values

    def data_type(self) -> DataType:
        if not self.tokens:
            raise ValueError(f"cannot read the type {self.text!r}: it ends early")
        name = self.tokens.pop(0).upper()
        if name in _SIMPLE:
            if name == 'DOUBLE':
                self.take('PRECISION')
            data_type = _SIMPLE[name]()
        elif name in ('DECIMAL', 'DEC', 'NUMERIC'):
            data_type = DataTypes.DECIMAL(*self.parameters(10, 0))
        elif name in ('CHAR', 'BINARY'):
            data_type = getattr(DataTypes, name)(*self.parameters(1))
        elif name in ('VARCHAR', 'VARBINARY'):  # without a length: of any length
            length = self.parameters()
            data_type = getattr(DataTypes, name)(*length) if length else \
                (DataTypes.STRING() if name == 'VARCHAR' else DataTypes.BYTES())
        elif name == 'TIME':
            data_type = DataTypes.TIME(*self.parameters(0))
            self.time_zone(False)
        elif name in ('TIMESTAMP', 'TIMESTAMP_LTZ'):
            precision = self.parameters(6)
            local = name == 'TIMESTAMP_LTZ' or self.time_zone(True)
            data_type = (DataTypes.TIMESTAMP_LTZ if local else DataTypes.TIMESTAMP)(*precision)
        elif name == 'ARRAY':
            self.expect('<')
            data_type = DataTypes.ARRAY(self.data_type())
            self.expect('>')
        elif name == 'MAP':
            self.expect('<')
            key = self.data_type()
            self.expect(',')
            data_type = DataTypes.MAP(key, self.data_type())
            self.expect('>')
        elif name == 'ROW':
            data_type = self.row()
        else:
            raise ValueError(f"the type {self.text!r} is not available here ({name})")
        if self.take('NOT'):
            self.expect('NULL')
            return data_type.not_null()
        self.take('NULL')
        return data_type

    def time_zone(self, local_allowed: bool) -> bool:
        """Reads ``WITHOUT TIME ZONE`` (False) or ``WITH LOCAL TIME ZONE`` (True)."""
        if self.take('WITHOUT'):
            self.expect('TIME')
            self.expect('ZONE')
        elif local_allowed and self.take('WITH'):
            self.expect('LOCAL')
            self.expect('TIME')
            self.expect('ZONE')
            return True
        return False

    def row(self) -> DataType:
        closing = '>' if self.take('<') else ')' if self.take('(') else None
        if closing is None:
            raise ValueError(f"cannot read the type {self.text!r}: ROW<name type, ...>")
        fields = []
        while not self.take(closing):
            if fields:
                self.expect(',')
            fields.append(DataTypes.FIELD(_name(self.tokens.pop(0)), self.data_type()))
        return DataTypes.ROW(fields)


# --- text ---------------------------------------------------------------------------------
def _closing(text: str, opening: int) -> int:
    """The index of the parenthesis closing the one at ``opening``."""
    depth, quote = 0, None
    for index in range(opening, len(text)):
        char = text[index]
        if quote:
            quote = None if char == quote else quote
        elif char in "'`":
            quote = char
        elif char == '(':
            depth += 1
        elif char == ')':
            depth -= 1
            if depth == 0:
                return index
    raise ValueError(f"{_head(text[opening:])}: a parenthesis is not closed")


def _split(text: str) -> List[str]:
    """``text`` cut at the commas outside parentheses, angle brackets and quotes."""
    items, depth, quote, start = [], 0, None, 0
    for index, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'`":
            quote = char
        elif char in '(<':
            depth += 1
        elif char in ')>' and depth:
            depth -= 1
        elif char == ',' and depth == 0:
            items.append(text[start:index].strip())
            start = index + 1
    items.append(text[start:].strip())
    return [i for i in items if i]


def _quoted(expression: str, names: List[str]) -> str:
    """``expression`` with each column name in it quoted, as Flink shows it: ``ts -
    INTERVAL '1' SECOND`` of a table with a column ts shows as `ts` - INTERVAL '1' SECOND."""
    return re.sub(r"'(?:[^']|'')*'|`(?:[^`]|``)+`|[A-Za-z_$][\w$]*",
                  lambda m: '`%s`' % m.group(0) if m.group(0) in names else m.group(0),
                  expression)


def _name(identifier: str) -> str:
    return identifier[1:-1].replace('``', '`') if identifier.startswith('`') else identifier


def _head(text: str) -> str:
    text = ' '.join(text.split())
    return repr(text if len(text) <= 60 else text[:57] + '...')
