// What Neo4j's `=~` answers: Pattern.compile(pattern).matcher(input).matches(), as in Neo4j's
// CypherFunctions.regex. Reads lines "<pattern hex>\t<input hex>" (UTF-8 bytes as hex) on stdin
// and prints one line each: true, false, or "error <message>". Used by
// tests/unit/test_java_regex.py to check the proxy's translation against a real JVM.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

public class JavaRegex {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            String[] fields = line.split("\t", -1);
            String pattern = text(fields[0]), input = text(fields[1]);
            try {
                out.append(Pattern.compile(pattern).matcher(input).matches()).append('\n');
            } catch (PatternSyntaxException e) {
                out.append("error ").append(e.getDescription().replace('\n', ' ')).append('\n');
            }
        }
        System.out.print(out);
    }

    private static String text(String hex) {
        return new String(HexFormat.of().parseHex(hex), StandardCharsets.UTF_8);
    }
}
