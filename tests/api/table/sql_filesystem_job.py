"""The program of test_sql_filesystem.py: run with argument "pyflink" (PyFlink 2.3.0) or
"api" (this project); the same code after the imports. The filesystem SQL connector in
csv and json: reading (ignoring parse errors), writing part files (INSERT INTO and
execute_insert), reading them back, and a missing required option."""
import os
import shutil
import sys
import tempfile

if sys.argv[1] == "pyflink":
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import StreamTableEnvironment
else:
    from api.datastream import StreamExecutionEnvironment
    from api.table import StreamTableEnvironment

base = tempfile.mkdtemp()
os.makedirs(base + '/in')
with open(base + '/in/a.csv', 'w') as f:
    f.write('1,alice,1.5,true,12.30,2024-01-02,2024-01-02 10:11:12.345\n'
            '2,"bob, jr",2.0,false,0.05,2024-02-03,2024-02-03 00:00:00\n'
            'x,bad,1,true,1,2024-01-01,2024-01-01 00:00:00\n'
            '3,,,,,,\n')
with open(base + '/in/b.json', 'w') as f:
    f.write('{"id": 1, "name": "alice", "score": 1.5, "ok": true, "amount": 12.3, '
            '"d": "2024-01-02", "ts": "2024-01-02 10:11:12.345"}\n'
            '{"id": 2, "name": "bob \\"q\\"", "score": 2, "ok": false, "amount": 0.05, '
            '"d": "2024-02-03", "ts": "2024-02-03 00:00:00"}\n'
            'not json\n'
            '{"id": 3}\n')
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
cols = ("id INT, name STRING, score DOUBLE, ok BOOLEAN, amount DECIMAL(10, 2), d DATE, "
        "ts TIMESTAMP(3)")


def create(name, path, fmt, *options):
    t_env.execute_sql(f"CREATE TABLE {name} ({cols}) WITH ('connector' = 'filesystem', "
                      f"'path' = '{base}/{path}', 'format' = '{fmt}'"
                      + ''.join(", '%s' = '%s'" % o for o in options) + ")")


create('csv_in', 'in/a.csv', 'csv', ('csv.ignore-parse-errors', 'true'))
create('json_in', 'in/b.json', 'json', ('json.ignore-parse-errors', 'true'))
for name in ('csv_in', 'json_in'):
    for row in sorted(t_env.execute_sql(f"SELECT * FROM {name}").collect(), key=str):
        print(name, row)
create('csv_out', 'csv_out', 'csv', ('csv.field-delimiter', ';'))
create('json_out', 'json_out', 'json')
t_env.execute_sql("INSERT INTO csv_out SELECT * FROM csv_in WHERE id IS NOT NULL").wait()
t_env.from_path('json_in').execute_insert('json_out').wait()
for out in ('csv_out', 'json_out'):
    files = sorted(os.listdir(f'{base}/{out}'))
    print(out, [f.split('-')[0] for f in files])
    for f in files:
        print(open(f'{base}/{out}/{f}').read(), end='')
create('csv_back', 'csv_out', 'csv', ('csv.field-delimiter', ';'),
       ('csv.ignore-parse-errors', 'true'))
create('json_back', 'json_out', 'json')
for name in ('csv_back', 'json_back'):
    for row in sorted(t_env.execute_sql(f"SELECT id, name, amount, ts FROM {name}").collect(),
                      key=str):
        print(name, row)
try:
    t_env.execute_sql(f"CREATE TABLE nopath ({cols}) WITH ('connector' = 'filesystem', "
                      "'format' = 'csv')")
    t_env.execute_sql("SELECT * FROM nopath").collect()
except Exception as e:
    print('missing path:', 'Missing required options are' in str(e) and 'path' in str(e))
shutil.rmtree(base)
