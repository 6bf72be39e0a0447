"""CsvRowSerializationSchema and CsvRowDeserializationSchema: Row to one CSV line and back.

The tables were observed with PyFlink 2.3.0's Java schemas through py4j: rows (read from
JSON by JsonRowDeserializationSchema) written with each set of builder options, and CSV
messages read (shown as the JSON JsonRowSerializationSchema writes for the row read)."""
import datetime
from decimal import Decimal

import pytest

from api.common import Row, Types
from api.datastream.formats.csv import CsvRowDeserializationSchema, CsvRowSerializationSchema
from api.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema
from tests.api.datastream.formats.row_types import ROW_TYPES

# The CSV PyFlink 2.3.0 writes, per builder option set, for the row read from JSON.
WRITE_OPTIONS = [
    {},
    {'set_field_delimiter': ';'},
    {'set_field_delimiter': '\t'},
    {'set_quote_character': "'"},
    {'disable_quote_character': None},
    {'set_escape_character': '\\'},
    {'set_escape_character': '\\', 'disable_quote_character': None},
    {'set_null_literal': 'NULL'},
    {'set_line_delimiter': '\r\n'},
    {'set_line_delimiter': ''},
    {'set_array_element_delimiter': '|'},
]
WRITTEN = [  # (row type, row as JSON, CSV lines in the order of WRITE_OPTIONS)
    ('basic', '{"i": 1, "s": "x", "f": 110.1, "d": 1e10, "b": true, "l": 5, "sh": 7, "by": -3}', [
        '1,x,110.1,1.0E10,true,5,7,-3\n',
        '1;x;110.1;1.0E10;true;5;7;-3\n',
        '1\tx\t110.1\t1.0E10\ttrue\t5\t7\t-3\n',
        '1,x,110.1,1.0E10,true,5,7,-3\n',
        '1,x,110.1,1.0E10,true,5,7,-3\n',
        '1,x,110.1,1.0E10,true,5,7,-3\n',
        '1,x,110.1,1.0E10,true,5,7,-3\n',
        '1,x,110.1,1.0E10,true,5,7,-3\n',
        '1,x,110.1,1.0E10,true,5,7,-3\r\n',
        '1,x,110.1,1.0E10,true,5,7,-3',
        '1,x,110.1,1.0E10,true,5,7,-3\n',
    ]),
    ('basic', '{"i": null, "s": null, "f": null, "d": null, "b": null, "l": null, "sh": null, "by": null}', [
        ',,,,,,,\n',
        ';;;;;;;\n',
        '\t\t\t\t\t\t\t\n',
        ',,,,,,,\n',
        ',,,,,,,\n',
        ',,,,,,,\n',
        ',,,,,,,\n',
        'NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL\n',
        ',,,,,,,\r\n',
        ',,,,,,,',
        ',,,,,,,\n',
    ]),
    ('strs', '{"a": "has,comma", "b": "has\\"quote", "c": "has\\nnewline"}', [
        '"has,comma","has""quote","has\nnewline"\n',
        '"has,comma";"has""quote";"has\nnewline"\n',
        'has,comma\t"has""quote"\t"has\nnewline"\n',
        '\'has,comma\',\'has"quote\',\'has\nnewline\'\n',
        'has,comma,has"quote,has\nnewline\n',
        '"has,comma","has""quote","has\nnewline"\n',
        'has,comma,has"quote,has\nnewline\n',
        '"has,comma","has""quote","has\nnewline"\n',
        '"has,comma","has""quote","has\nnewline"\r\n',
        '"has,comma","has""quote","has\nnewline"',
        '"has,comma","has""quote","has\nnewline"\n',
    ]),
    ('strs', '{"a": "", "b": " lead", "c": "trail "}', [
        '," lead","trail "\n',
        ';" lead";"trail "\n',
        '\t" lead"\t"trail "\n',
        ",' lead','trail '\n",
        ', lead,trail \n',
        '," lead","trail "\n',
        ', lead,trail \n',
        '," lead","trail "\n',
        '," lead","trail "\r\n',
        '," lead","trail "',
        '," lead","trail "\n',
    ]),
    ('strs', '{"a": "#hash", "b": "semi;colon", "c": "tab\\there"}', [
        '"#hash",semi;colon,"tab\there"\n',
        '"#hash";"semi;colon";"tab\there"\n',
        '#hash\tsemi;colon\t"tab\there"\n',
        "'#hash',semi;colon,'tab\there'\n",
        '#hash,semi;colon,tab\there\n',
        '"#hash",semi;colon,"tab\there"\n',
        '#hash,semi;colon,tab\there\n',
        '"#hash",semi;colon,"tab\there"\n',
        '"#hash",semi;colon,"tab\there"\r\n',
        '"#hash",semi;colon,"tab\there"',
        '"#hash",semi;colon,"tab\there"\n',
    ]),
    ('strs', '{"a": "single\'quote", "b": "back\\\\slash", "c": "cr\\rhere"}', [
        '"single\'quote","back\\slash","cr\rhere"\n',
        '"single\'quote";"back\\slash";"cr\rhere"\n',
        'single\'quote\t"back\\slash"\t"cr\rhere"\n',
        "'single''quote','back\\slash','cr\rhere'\n",
        "single'quote,back\\slash,cr\rhere\n",
        '"single\'quote","back\\\\slash","cr\rhere"\n',
        "single'quote,back\\slash,cr\rhere\n",
        '"single\'quote","back\\slash","cr\rhere"\n',
        '"single\'quote","back\\slash","cr\rhere"\r\n',
        '"single\'quote","back\\slash","cr\rhere"',
        '"single\'quote","back\\slash","cr\rhere"\n',
    ]),
    ('strs', '{"a": "null", "b": "NULL", "c": "x"}', [
        'null,NULL,x\n',
        'null;NULL;x\n',
        'null\tNULL\tx\n',
        'null,NULL,x\n',
        'null,NULL,x\n',
        'null,NULL,x\n',
        'null,NULL,x\n',
        'null,NULL,x\n',
        'null,NULL,x\r\n',
        'null,NULL,x',
        'null,NULL,x\n',
    ]),
    ('strs', '{"a": "\\u00e9t\\u00e9", "b": "a|b", "c": "\\u0001"}', [
        'été,a|b,"\x01"\n',
        'été;a|b;"\x01"\n',
        'été\ta|b\t"\x01"\n',
        "été,a|b,'\x01'\n",
        'été,a|b,\x01\n',
        'été,a|b,"\x01"\n',
        'été,a|b,\x01\n',
        'été,a|b,"\x01"\n',
        'été,a|b,"\x01"\r\n',
        'été,a|b,"\x01"',
        'été,a|b,"\x01"\n',
    ]),
    ('strs', '{"a": "abc", "b": "a\\"", "c": "\\""}', [
        'abc,"a""",""""\n',
        'abc;"a""";""""\n',
        'abc\t"a"""\t""""\n',
        'abc,\'a"\',\'"\'\n',
        'abc,a","\n',
        'abc,"a""",""""\n',
        'abc,a","\n',
        'abc,"a""",""""\n',
        'abc,"a""",""""\r\n',
        'abc,"a""",""""',
        'abc,"a""",""""\n',
    ]),
    ('time', '{"d": "2020-01-02", "t": "10:11:12Z", "ts": "2020-01-02T10:11:12.345Z"}', [
        '2020-01-02,10:11:12,"2020-01-02 10:11:12.345"\n',
        '"2020-01-02";"10:11:12";"2020-01-02 10:11:12.345"\n',
        '2020-01-02\t10:11:12\t"2020-01-02 10:11:12.345"\n',
        "2020-01-02,10:11:12,'2020-01-02 10:11:12.345'\n",
        '2020-01-02,10:11:12,2020-01-02 10:11:12.345\n',
        '2020-01-02,10:11:12,"2020-01-02 10:11:12.345"\n',
        '2020-01-02,10:11:12,2020-01-02 10:11:12.345\n',
        '2020-01-02,10:11:12,"2020-01-02 10:11:12.345"\n',
        '2020-01-02,10:11:12,"2020-01-02 10:11:12.345"\r\n',
        '2020-01-02,10:11:12,"2020-01-02 10:11:12.345"',
        '2020-01-02,10:11:12,"2020-01-02 10:11:12.345"\n',
    ]),
    ('time', '{"d": "2020-01-02", "t": "10:11:12Z", "ts": "2020-01-02T10:11:12Z"}', [
        '2020-01-02,10:11:12,"2020-01-02 10:11:12.0"\n',
        '"2020-01-02";"10:11:12";"2020-01-02 10:11:12.0"\n',
        '2020-01-02\t10:11:12\t"2020-01-02 10:11:12.0"\n',
        "2020-01-02,10:11:12,'2020-01-02 10:11:12.0'\n",
        '2020-01-02,10:11:12,2020-01-02 10:11:12.0\n',
        '2020-01-02,10:11:12,"2020-01-02 10:11:12.0"\n',
        '2020-01-02,10:11:12,2020-01-02 10:11:12.0\n',
        '2020-01-02,10:11:12,"2020-01-02 10:11:12.0"\n',
        '2020-01-02,10:11:12,"2020-01-02 10:11:12.0"\r\n',
        '2020-01-02,10:11:12,"2020-01-02 10:11:12.0"',
        '2020-01-02,10:11:12,"2020-01-02 10:11:12.0"\n',
    ]),
    ('dec', '{"dec": 1.10, "bi": 123456789012345678901234567890}', [
        '1.1,123456789012345678901234567890\n',
        '1.1;123456789012345678901234567890\n',
        '1.1\t123456789012345678901234567890\n',
        '1.1,123456789012345678901234567890\n',
        '1.1,123456789012345678901234567890\n',
        '1.1,123456789012345678901234567890\n',
        '1.1,123456789012345678901234567890\n',
        '1.1,123456789012345678901234567890\n',
        '1.1,123456789012345678901234567890\r\n',
        '1.1,123456789012345678901234567890',
        '1.1,123456789012345678901234567890\n',
    ]),
    ('dec', '{"dec": 1e20, "bi": 1}', [
        '1E+20,1\n',
        '1E+20;1\n',
        '1E+20\t1\n',
        '1E+20,1\n',
        '1E+20,1\n',
        '1E+20,1\n',
        '1E+20,1\n',
        '1E+20,1\n',
        '1E+20,1\r\n',
        '1E+20,1',
        '1E+20,1\n',
    ]),
    ('strarr', '{"id": 1, "v": ["a", "b,c", null, ""]}', [
        '1,"a;b,c;;"\n',
        '1;"a;b,c;;"\n',
        '1\ta;b,c;;\n',
        "1,'a;b,c;;'\n",
        '1,a;b,c;;\n',
        '1,"a;b,c;;"\n',
        '1,a;b,c;;\n',
        '1,"a;b,c;NULL;"\n',
        '1,"a;b,c;;"\r\n',
        '1,"a;b,c;;"',
        '1,"a|b,c||"\n',
    ]),
    ('intarr', '{"v": [1, null, 3]}', [
        '1;;3\n',
        '"1;;3"\n',
        '1;;3\n',
        '1;;3\n',
        '1;;3\n',
        '1;;3\n',
        '1;;3\n',
        '1;NULL;3\n',
        '1;;3\r\n',
        '1;;3',
        '1||3\n',
    ]),
    ('bytes', '{"v": "AQID/w=="}', [
        'AQID/w==\n',
        '"AQID/w=="\n',
        'AQID/w==\n',
        'AQID/w==\n',
        'AQID/w==\n',
        'AQID/w==\n',
        'AQID/w==\n',
        'AQID/w==\n',
        'AQID/w==\r\n',
        'AQID/w==',
        'AQID/w==\n',
    ]),
    ('row2', '{"id": 1, "r": {"a": 2, "b": "x,y"}}', [
        '1,"2;x,y"\n',
        '1;"2;x,y"\n',
        '1\t2;x,y\n',
        "1,'2;x,y'\n",
        '1,2;x,y\n',
        '1,"2;x,y"\n',
        '1,2;x,y\n',
        '1,"2;x,y"\n',
        '1,"2;x,y"\r\n',
        '1,"2;x,y"',
        '1,"2|x,y"\n',
    ]),
    ('double', '{"v": 0.1}', [
        '0.1\n',
        '0.1\n',
        '0.1\n',
        '0.1\n',
        '0.1\n',
        '0.1\n',
        '0.1\n',
        '0.1\n',
        '0.1\r\n',
        '0.1',
        '0.1\n',
    ]),
    ('double', '{"v": 1e-5}', [
        '1.0E-5\n',
        '1.0E-5\n',
        '1.0E-5\n',
        '1.0E-5\n',
        '1.0E-5\n',
        '1.0E-5\n',
        '1.0E-5\n',
        '1.0E-5\n',
        '1.0E-5\r\n',
        '1.0E-5',
        '1.0E-5\n',
    ]),
    ('float', '{"v": 3.4e38}', [
        '3.4E38\n',
        '3.4E38\n',
        '3.4E38\n',
        '3.4E38\n',
        '3.4E38\n',
        '3.4E38\n',
        '3.4E38\n',
        '3.4E38\n',
        '3.4E38\r\n',
        '3.4E38',
        '3.4E38\n',
    ]),
]

READ = [  # (row type, CSV message, builder options, the JSON written for the row read)
    ('basic', '1,x,110.1,1.0E10,true,5,7,-3', {},
     '{"i":1,"s":"x","f":110.1,"d":1.0E10,"b":true,"l":5,"sh":7,"by":-3}'),
    ('basic', '1,x,110.1,1.0E10,true,5,7,-3\n', {},
     '{"i":1,"s":"x","f":110.1,"d":1.0E10,"b":true,"l":5,"sh":7,"by":-3}'),
    ('basic', ' 1 , x , 1.5 , 2 , TRUE ,5,7,-3', {},
     '{"i":1,"s":" x ","f":1.5,"d":2.0,"b":true,"l":5,"sh":7,"by":-3}'),
    ('basic', '1,"x,y",1,2,yes,5,7,-3', {},
     '{"i":1,"s":"x,y","f":1.0,"d":2.0,"b":false,"l":5,"sh":7,"by":-3}'),
    ('basic', '1,x,1,2,false,5,7', {'set_ignore_parse_errors': True},
     '{"i":1,"s":"x","f":1.0,"d":2.0,"b":false,"l":5,"sh":7,"by":null}'),
    ('basic', 'a,x,1,2,false,5,7,-3', {'set_ignore_parse_errors': True},
     '{"i":null,"s":"x","f":1.0,"d":2.0,"b":false,"l":5,"sh":7,"by":-3}'),
    ('basic', '1,x,1,2,false,5,7,300', {'set_ignore_parse_errors': True},
     '{"i":1,"s":"x","f":1.0,"d":2.0,"b":false,"l":5,"sh":7,"by":null}'),
    ('strs', '"a ""quoted"" word","b",c', {},
     '{"a":"a \\"quoted\\" word","b":"b","c":"c"}'),
    ('strs', '"multi\nline",b,c', {},
     '{"a":"multi\\nline","b":"b","c":"c"}'),
    ('strs', 'NULL,null,', {'set_null_literal': 'NULL'},
     '{"a":null,"b":"null","c":""}'),
    ('strs', 'a;b;c', {'set_field_delimiter': ';'},
     '{"a":"a","b":"b","c":"c"}'),
    ('strs', "'a,b',c,d", {'set_quote_character': "'"},
     '{"a":"a,b","b":"c","c":"d"}'),
    ('strs', 'a\\,b,c\\\\d,e', {'set_escape_character': '\\'},
     '{"a":"a,b","b":"c\\\\d","c":"e"}'),
    ('strs', '"a\\"b",c,d', {'set_escape_character': '\\'},
     '{"a":"a\\"b","b":"c","c":"d"}'),
    ('strs', '#comment,b,c', {},
     '{"a":"#comment","b":"b","c":"c"}'),
    ('strs', ' a , b ,c ', {},
     '{"a":" a ","b":" b ","c":"c "}'),
    ('strs', 'x,"",""""', {},
     '{"a":"x","b":"","c":"\\""}'),
    ('strs', 'a,b,c\nd,e,f', {},
     '{"a":"a","b":"b","c":"c"}'),
    ('strs', 'a,b,c\r\n', {},
     '{"a":"a","b":"b","c":"c"}'),
    ('time', '2020-01-02,10:11:12,2020-01-02 10:11:12.345', {},
     '{"d":"2020-01-02","t":"10:11:12Z","ts":"2020-01-02T10:11:12.345Z"}'),
    ('time', '2020-01-02,10:11:12,2020-01-02 10:11:12', {},
     '{"d":"2020-01-02","t":"10:11:12Z","ts":"2020-01-02T10:11:12Z"}'),
    ('dec', '1.10,123456789012345678901234567890', {},
     '{"dec":1.10,"bi":123456789012345678901234567890}'),
    ('dec', ' 1E+3 , 7 ', {},
     '{"dec":1E+3,"bi":7}'),
    ('strarr', '1,a;b;;c', {},
     '{"id":1,"v":["a","b","","c"]}'),
    ('strarr', '1,"a;b"', {},
     '{"id":1,"v":["a","b"]}'),
    ('strarr', '1,a|b', {'set_array_element_delimiter': '|'},
     '{"id":1,"v":["a","b"]}'),
    ('strarr', '1,', {},
     '{"id":1,"v":[]}'),
    ('intarr', '1;2; 3', {},
     '{"v":[1,2,3]}'),
    ('bytes', 'AQID/w==', {},
     '{"v":"AQID/w=="}'),
    ('row2', '1,2;x', {},
     '{"id":1,"r":{"a":2,"b":"x"}}'),
    ('float', '0.1', {},
     '{"v":0.1}'),
    ('float', '1e40', {},
     '{"v":"Infinity"}'),
    ('double', 'NaN', {},
     '{"v":"NaN"}'),
    ('bool', 'True', {},
     '{"v":true}'),
]
READ_FAILING = [  # (row type, CSV message, builder options)
    ('basic', ',,,,,,,', {}),  #  java.lang.NumberFormatException: For input string: ""
    ('basic', '1,x,1,2,false,5,7', {}),  #  java.lang.RuntimeException: Row length mismatch. 8 fields expected but was 7.
    ('basic', '1,x,1,2,false,5,7,-3,9', {}),  #  org.apache.flink.shaded.jackson2.com.fasterxml.jackson.dataformat.csv.CsvReadEx
    ('basic', 'a,x,1,2,false,5,7,-3', {}),  #  java.lang.NumberFormatException: For input string: "a"
    ('strs', '#comment,b,c', {'set_allow_comments': True}),  #  org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.exc.MismatchedI
    ('strs', '', {}),  #  org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.exc.MismatchedI
    ('strs', '\n', {}),  #  java.lang.RuntimeException: Row length mismatch. 3 fields expected but was 1.
    ('strs', 'a,b', {}),  #  java.lang.RuntimeException: Row length mismatch. 3 fields expected but was 2.
    ('time', '2020-01-02,10:11:12,2020-01-02T10:11:12', {}),  #  java.lang.IllegalArgumentException: Timestamp format must be yyyy-mm-dd hh:mm:s
    ('int', '', {}),  #  org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.exc.MismatchedI
    ('int', '""', {}),  #  java.lang.NumberFormatException: For input string: ""
]


def configured(builder, options: dict):
    for method, argument in options.items():
        getattr(builder, method)(*([] if argument is None else [argument]))
    return builder.build()


def json_row(name, text):
    return JsonRowDeserializationSchema.builder().type_info(ROW_TYPES[name]).build() \
        ._deserialize(text.encode())


def json_text(name, row):
    return JsonRowSerializationSchema.builder().with_type_info(ROW_TYPES[name]).build() \
        ._serialize(row).decode()


@pytest.mark.parametrize("name, row_json, lines", WRITTEN)
def test_writes_as_pyflink(name, row_json, lines):
    row = json_row(name, row_json)
    for options, line in zip(WRITE_OPTIONS, lines):
        schema = configured(CsvRowSerializationSchema.Builder(ROW_TYPES[name]), options)
        assert schema._serialize(row).decode() == line, options


@pytest.mark.parametrize("name, message, options, row_json", READ)
def test_reads_as_pyflink(name, message, options, row_json):
    schema = configured(CsvRowDeserializationSchema.Builder(ROW_TYPES[name]), options)
    assert json_text(name, schema._deserialize(message.encode())) == row_json


@pytest.mark.parametrize("name, message, options", READ_FAILING)
def test_unreadable_lines_fail_and_give_no_record_with_ignore_parse_errors(name, message,
                                                                          options):
    schema = configured(CsvRowDeserializationSchema.Builder(ROW_TYPES[name]), options)
    with pytest.raises(ValueError, match="Failed to deserialize CSV row"):
        schema._deserialize(message.encode())
    if message == "1,x,1,2,false,5,7,-3,9":  # too many fields: the whole line is unreadable
        ignoring = configured(CsvRowDeserializationSchema.Builder(ROW_TYPES[name]),
                              dict(options, set_ignore_parse_errors=True))
        assert ignoring._deserialize(message.encode()) is None


def test_round_trip_of_python_values():
    row_type = Types.ROW_NAMED(
        ["i", "s", "f", "dec", "d", "ts", "tags", "raw", "r"],
        [Types.INT(), Types.STRING(), Types.FLOAT(), Types.BIG_DEC(), Types.SQL_DATE(),
         Types.SQL_TIMESTAMP(), Types.OBJECT_ARRAY(Types.STRING()),
         Types.PRIMITIVE_ARRAY(Types.BYTE()), Types.ROW([Types.INT(), Types.STRING()])])
    row = Row(7, 'say "hi", twice\n', 110.1, Decimal("1.10"), datetime.date(2020, 1, 2),
              datetime.datetime(2020, 1, 2, 10, 11, 12, 345000), ["a", None, "b"], b"\x00\xff",
              Row(1, "x"))
    line = CsvRowSerializationSchema.Builder(row_type).set_null_literal("NULL").build() \
        ._serialize(row)
    assert line == (b'7,"say ""hi"", twice\n",110.1,1.10,2020-01-02,"2020-01-02 10:11:12.345",'
                    b'a;NULL;b,AP8=,1;x\n')
    back = CsvRowDeserializationSchema.Builder(row_type).set_null_literal("NULL").build() \
        ._deserialize(line)
    assert back == Row(i=7, s='say "hi", twice\n', f=110.0999984741211, dec=Decimal("1.10"),
                       d=datetime.date(2020, 1, 2),
                       ts=datetime.datetime(2020, 1, 2, 10, 11, 12, 345000),
                       tags=["a", None, "b"], raw=b"\x00\xff", r=Row(f0=1, f1="x"))
    assert back.r.f1 == "x"


def test_writing_a_row_of_another_arity_fails():
    with pytest.raises(ValueError, match="expects 3 fields, got 1"):
        CsvRowSerializationSchema.Builder(ROW_TYPES["strs"]).build()._serialize(Row("a"))


def test_builders_validate_as_pyflink():
    with pytest.raises(TypeError, match="Type information must not be None"):
        CsvRowSerializationSchema.Builder(None)
    with pytest.raises(TypeError, match="Type information must not be None"):
        CsvRowDeserializationSchema.Builder(None)
    with pytest.raises(ValueError, match="only row type information"):
        CsvRowSerializationSchema.Builder(Types.INT())
    with pytest.raises(ValueError, match="Unsupported new line delimiter"):
        CsvRowSerializationSchema.Builder(ROW_TYPES["int"]).set_line_delimiter("x")
    with pytest.raises(TypeError, match="Null literal must not be None"):
        CsvRowDeserializationSchema.Builder(ROW_TYPES["int"]).set_null_literal(None)
    with pytest.raises(ValueError, match="unsupported type information"):
        CsvRowSerializationSchema.Builder(Types.ROW([Types.MAP(Types.INT(), Types.INT())])) \
            .build()
