/*
 * Test-only (crawl_assets test suite, Apache-2.0): the rule syntax of Elasticsearch's `mapping` char filter.
 *
 * A rule is "source => target" (split at the last "=>", both sides trimmed). In each side a backslash
 * escapes: \\ \n \t \r \b \f, \\uXXXX (four hex digits, one UTF-16 unit), and any other character stands
 * for itself. So "\\u200C=>\\u0020" maps ZERO WIDTH NON-JOINER to a space (the trim happens before the
 * escapes are read, so an escaped space survives it).
 */
package org.crawlassets.testanalysis;

import org.apache.lucene.analysis.charfilter.NormalizeCharMap;

import java.util.List;

final class MappingRules {
    private MappingRules() {}

    static NormalizeCharMap parse(List<String> rules) {
        NormalizeCharMap.Builder builder = new NormalizeCharMap.Builder();
        for (String rule : rules) {
            int arrow = rule.lastIndexOf("=>");
            if (arrow < 0) {
                throw new IllegalArgumentException("Invalid Mapping Rule : [" + rule + "]");
            }
            String source = unescape(rule.substring(0, arrow).trim(), rule);
            String target = unescape(rule.substring(arrow + 2).trim(), rule);
            try {
                builder.add(source, target);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("Invalid Mapping Rule : [" + rule + "]. " + e.getMessage(), e);
            }
        }
        return builder.build();
    }

    static String unescape(String side, String rule) {
        StringBuilder out = new StringBuilder(side.length());
        for (int i = 0; i < side.length(); i++) {
            char c = side.charAt(i);
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (++i >= side.length()) {
                throw new IllegalArgumentException("Invalid escaped char in [" + rule + "]");
            }
            char e = side.charAt(i);
            switch (e) {
                case 'n' -> out.append('\n');
                case 't' -> out.append('\t');
                case 'r' -> out.append('\r');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'u' -> {
                    if (i + 4 >= side.length()) {
                        throw new IllegalArgumentException("Invalid escaped char in [" + rule + "]");
                    }
                    out.append((char) Integer.parseInt(side.substring(i + 1, i + 5), 16));
                    i += 4;
                }
                default -> out.append(e); // "\\" and any other escaped character stand for themselves
            }
        }
        return out.toString();
    }
}
